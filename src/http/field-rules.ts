export { hasControlCharacters } from '../text-rules.js';
// Rules every public text field shares; they live below http because the office's commands apply them too.
export { CONTROL_CHARACTERS_MESSAGE, publicString } from '../contact-rules.js';
export { personName } from '../name-rules.js';
