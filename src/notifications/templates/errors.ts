import { defineErrors } from '../../platform/errors.js';

/** Notification templates: administration and sending. */
export const TemplateErrors = defineErrors({
  /** No template of this name in the user's language nor in en (`details.template`); or no template with this id (`details.id`, the uuid sent). */
  TEMPLATE_NOT_FOUND: { status: 404, message: 'There is no such notification template.' },
  /** `details.missing`: placeholders of the template without a value; `details.unknown`: values the template has no placeholder for. Nothing was sent. */
  TEMPLATE_VALUES_INVALID: { status: 422, message: 'The values do not match the template\'s placeholders.' },
  /** A template of this channel, name and language exists (`details.id`: its uuid). */
  TEMPLATE_EXISTS: { status: 409, message: 'A template of this name and language already exists.' },
  /** `details.fields`: a brace outside a placeholder, or (a named template) a placeholder its callers do not send. */
  TEMPLATE_INVALID: { status: 422, message: 'The template text cannot be used.' },
  /** A language other than en for a template that has no en: create the en version first (the fallback of every language). */
  TEMPLATE_FALLBACK_MISSING: { status: 409, message: 'Create the en version of this template first: it is the fallback of every language.' },
  /** The English version of a named template, or of one that has other languages, is the fallback and cannot be deleted. */
  TEMPLATE_REQUIRED: { status: 409, message: 'This template is the fallback of its name and cannot be deleted.' },
});
