import { describe, expect, it } from 'vitest';
import { findTemplateDataProblem, type TemplateParam } from './template-data.ts';

const params: TemplateParam[] = [
  { name: 'otp', type: 'STRING', required: true, max_length: 6, min_length: 4 },
  { name: 'note', type: 'STRING', required: false, max_length: 5, min_length: 0 },
];

describe('findTemplateDataProblem', () => {
  it('accepts data that fits', () => {
    expect(findTemplateDataProblem(params, { otp: '1234' })).toBeNull();
    expect(findTemplateDataProblem(params, { otp: '123456', note: 'hi' })).toBeNull();
  });

  it('counts characters, not bytes (Vietnamese diacritics)', () => {
    expect(findTemplateDataProblem(params, { otp: '1234', note: 'Nguyễ' })).toBeNull();
  });

  it.each([
    [{}, /missing required parameter "otp"/],
    [{ otp: '123' }, /less than its min_length 4/],
    [{ otp: '1234567' }, /more than its max_length 6/],
    [{ otp: '1234', extra: 'x' }, /unknown parameter "extra"/],
    [{ otp: 1234 }, /must be a string/],
  ])('explains %j', (data, problem) => {
    expect(findTemplateDataProblem(params, data as Record<string, unknown>)).toMatch(problem);
  });
});
