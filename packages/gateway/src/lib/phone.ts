/** Mobile prefixes (the two digits after 84) of Vietnamese carriers. */
const CARRIER_BY_PREFIX: Record<string, string> = {};
const CARRIER_PREFIXES: Record<string, string[]> = {
  Viettel: ['32', '33', '34', '35', '36', '37', '38', '39', '86', '96', '97', '98'],
  Mobifone: ['70', '76', '77', '78', '79', '89', '90', '93'],
  Vinaphone: ['81', '82', '83', '84', '85', '88', '91', '94'],
  Vietnamobile: ['52', '56', '58', '92'],
  Gmobile: ['59', '99'],
  Itel: ['87'],
  Reddi: ['55'],
};
for (const [carrier, prefixes] of Object.entries(CARRIER_PREFIXES)) {
  for (const prefix of prefixes) CARRIER_BY_PREFIX[prefix] = carrier;
}

/**
 * Normalises a phone number to the form 84 followed by digits, as docs/api.md says: strip spaces,
 * dots, dashes and parentheses; +84 becomes 84; a leading 0 becomes 84; anything else not starting
 * with 84 gets 84 in front. Nothing else is validated: the platform rejects wrong numbers later.
 * Returns '' when nothing is left after stripping.
 */
export function normalizePhone(input: string): string {
  const stripped = input.replace(/[\s.\-()]/g, '');
  if (stripped === '') return '';
  if (stripped.startsWith('+84')) return `84${stripped.slice(3)}`;
  if (stripped.startsWith('0')) return `84${stripped.slice(1)}`;
  if (stripped.startsWith('84')) return stripped;
  return `84${stripped.replace(/^\+/, '')}`;
}

/** The carrier of a normalised number from its prefix, or null when the prefix is unknown. */
export function carrierOf(normalizedPhone: string): string | null {
  return CARRIER_BY_PREFIX[normalizedPhone.slice(2, 4)] ?? null;
}
