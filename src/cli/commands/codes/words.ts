/** Said in every codes command's help: what a use is, and how uses are counted. */
export const WHAT_A_USE_IS = `A use is one registration, however many people it names: the code's discount applies once to it
(a percent or an amount off its tickets, or the code's price for each ticket of that type). Uses are counted
live: registrations awaiting payment or paid, and card payments in progress (for their half hour); a
cancelled or expired registration, or an abandoned card payment, gives its use back.`;
