import { defineErrors } from '../platform/errors.js';

export const FaqErrors = defineErrors({
  /** Unknown id, or (on the public routes) an inactive article. */
  FAQ_NOT_FOUND: { status: 404, message: 'No FAQ article has this id.' },
  /** `details.problems`: `[{row, field, message}]`, rows numbered from 1 (a CSV's header is row 0). Nothing was imported. */
  FAQ_IMPORT_INVALID: { status: 422, message: 'The import has invalid rows; nothing was imported.' },
  /** `details.repeated_ids`, `details.unknown_ids` or `details.other_category_ids` (uuids). Nothing was reordered. */
  FAQ_REORDER_INVALID: { status: 422, message: 'Every id to reorder must be an article of that category, once.' },
});
