import { defineErrors } from '../platform/errors.js';

export const EntityErrors = defineErrors({
  ENTITY_NOT_FOUND: { status: 404, message: 'No branch has this id.' },
  /** `details.code`: the code another branch holds (codes compare without regard to case). */
  ENTITY_EXISTS: { status: 409, message: 'Another branch already has this code.' },
});
