/**
 * Splits a SQLite migration into statements. The store talks to better-sqlite3 through Kysely,
 * which prepares one statement at a time (there is no `exec` behind it), so a file with several
 * statements has to be cut here.
 *
 * The cut follows SQLite's own rule, sqlite3_complete(): a semicolon ends a statement unless it is
 * inside a string, a quoted identifier or a comment, or inside the body of a CREATE TRIGGER, which
 * only ends at `END;`.
 */

type Token = 'semicolon' | 'space' | 'other' | 'explain' | 'create' | 'temp' | 'trigger' | 'end';

/**
 * The states of sqlite3_complete(): where in a statement the last token left us. `start` follows a
 * statement's final semicolon; the `trigger*` states are inside a CREATE TRIGGER body.
 */
type State = 'start' | 'normal' | 'explain' | 'create' | 'trigger' | 'triggerSemicolon' | 'triggerEnd';

/** sqlite3_complete()'s transition table, by state, then by token. */
const TRANSITIONS: Readonly<Record<State, Readonly<Record<Token, State>>>> = {
  start: { semicolon: 'start', space: 'start', other: 'normal', explain: 'explain', create: 'create', temp: 'normal', trigger: 'normal', end: 'normal' },
  normal: { semicolon: 'start', space: 'normal', other: 'normal', explain: 'normal', create: 'normal', temp: 'normal', trigger: 'normal', end: 'normal' },
  explain: { semicolon: 'start', space: 'explain', other: 'explain', explain: 'normal', create: 'create', temp: 'normal', trigger: 'normal', end: 'normal' },
  create: { semicolon: 'start', space: 'create', other: 'normal', explain: 'normal', create: 'normal', temp: 'create', trigger: 'trigger', end: 'normal' },
  trigger: { semicolon: 'triggerSemicolon', space: 'trigger', other: 'trigger', explain: 'trigger', create: 'trigger', temp: 'trigger', trigger: 'trigger', end: 'trigger' },
  triggerSemicolon: { semicolon: 'triggerSemicolon', space: 'triggerSemicolon', other: 'trigger', explain: 'trigger', create: 'trigger', temp: 'trigger', trigger: 'trigger', end: 'triggerEnd' },
  triggerEnd: { semicolon: 'start', space: 'triggerEnd', other: 'trigger', explain: 'trigger', create: 'trigger', temp: 'trigger', trigger: 'trigger', end: 'trigger' },
};

const KEYWORDS: ReadonlyMap<string, Token> = new Map<string, Token>([
  ['explain', 'explain'],
  ['create', 'create'],
  ['temp', 'temp'],
  ['temporary', 'temp'],
  ['trigger', 'trigger'],
  ['end', 'end'],
]);

const CLOSING_QUOTE: Readonly<Record<string, string>> = { "'": "'", '"': '"', '`': '`', '[': ']' };
const WHITESPACE = /\s/;
const IDENTIFIER_CHARACTER = /[A-Za-z0-9_$\u0080-\uffff]/;

/** The index just past the token that starts at `start`. */
function tokenEnd(text: string, start: number): number {
  const character = text[start]!;
  if (WHITESPACE.test(character)) {
    let position = start + 1;
    while (position < text.length && WHITESPACE.test(text[position]!)) position += 1;
    return position;
  }
  if (character === '-' && text[start + 1] === '-') {
    const newline = text.indexOf('\n', start);
    return newline === -1 ? text.length : newline + 1;
  }
  if (character === '/' && text[start + 1] === '*') {
    const close = text.indexOf('*/', start + 2);
    return close === -1 ? text.length : close + 2;
  }
  const closingQuote = CLOSING_QUOTE[character];
  if (closingQuote !== undefined) {
    // A doubled quote inside the quotes stands for the quote itself ('it''s'); brackets have no escape.
    let position = start + 1;
    for (;;) {
      const close = text.indexOf(closingQuote, position);
      if (close === -1) return text.length;
      if (closingQuote !== ']' && text[close + 1] === closingQuote) position = close + 2;
      else return close + 1;
    }
  }
  if (IDENTIFIER_CHARACTER.test(character)) {
    let position = start + 1;
    while (position < text.length && IDENTIFIER_CHARACTER.test(text[position]!)) position += 1;
    return position;
  }
  return start + 1;
}

function classify(tokenText: string): Token {
  if (tokenText === ';') return 'semicolon';
  if (WHITESPACE.test(tokenText[0]!) || tokenText.startsWith('--') || tokenText.startsWith('/*')) return 'space';
  return KEYWORDS.get(tokenText.toLowerCase()) ?? 'other';
}

/** The statements of a SQLite script, each with its comments, without empty ones. */
export function splitSqliteStatements(text: string): string[] {
  const statements: string[] = [];
  let state: State = 'start';
  let statementStart = 0;
  // A stretch of only comments and semicolons is no statement (better-sqlite3 refuses to prepare it).
  let hasContent = false;
  let position = 0;
  while (position < text.length) {
    const end = tokenEnd(text, position);
    const token = classify(text.slice(position, end));
    state = TRANSITIONS[state][token];
    if (token !== 'space' && token !== 'semicolon') hasContent = true;
    if (token === 'semicolon' && state === 'start') {
      if (hasContent) statements.push(text.slice(statementStart, end).trim());
      statementStart = end;
      hasContent = false;
    }
    position = end;
  }
  if (hasContent) statements.push(text.slice(statementStart).trim());
  return statements;
}
