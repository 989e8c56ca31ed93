import { describe, expect, it } from 'vitest';
import type { Template } from '../types.ts';
import { readRecipientsFile } from './recipients-file.ts';

const template: Template = {
  template_id: '250001',
  name: 'Order',
  status: 'ENABLE',
  template_type: 1,
  oa_id: '1',
  oa_name: 'OA',
  preview_url: '',
  price: 300,
  params: [
    { name: 'customer_name', type: 'STRING', required: true, min_length: 1, max_length: 5 },
    { name: 'note', type: 'STRING', required: false, min_length: 2, max_length: 10 },
  ],
};

describe('readRecipientsFile', () => {
  it('turns rows into recipients, leaving out empty optional params and tracking ids', () => {
    const file = readRecipientsFile('phone,tracking_id,customer_name,note\n0912, t-1 ,An,hello\n0913,,Bảo,\n', template);
    expect(file.problems).toEqual([]);
    expect(file.rows).toEqual([
      { line: 2, recipient: { phone: '0912', tracking_id: 't-1', template_data: { customer_name: 'An', note: 'hello' } } },
      { line: 3, recipient: { phone: '0913', template_data: { customer_name: 'Bảo' } } },
    ]);
  });

  it('counts characters as people do (an emoji is one), not UTF-16 units', () => {
    expect(readRecipientsFile('phone,tracking_id,customer_name\n0912,,😀😀😀😀😀\n', template).problems).toEqual([]);
  });

  it('lists every problem with its line', () => {
    const file = readRecipientsFile('phone,tracking_id,customer_name,note\n,t 1,,x\n0912,t-2,Alexander,ok\n0913,t-3\n', template);
    expect(file.problems).toEqual([
      'line 2: phone is empty',
      'line 2: tracking_id "t 1" must be at most 48 letters, digits, dots, hyphens or underscores',
      'line 2: customer_name is required',
      'line 2: note has 1 characters, the template allows 2 to 10',
      'line 3: customer_name has 9 characters, the template allows 1 to 5',
      'line 4: 2 fields, the header has 4',
      'line 4: customer_name is required',
    ]);
  });

  it('checks the header: first columns, unknown and missing params', () => {
    expect(readRecipientsFile('tracking_id,phone,customer_name\n', template).problems[0]).toMatch(/must start with phone,tracking_id/);
    expect(readRecipientsFile('phone,tracking_id,note,coupon\n', template).problems).toEqual([
      'line 1: column "coupon" is not a param of template 250001 (params: customer_name, note)',
      'line 1: required param "customer_name" has no column',
    ]);
    expect(readRecipientsFile('', template).problems).toEqual(['the file is empty (expected a header phone,tracking_id,<params…>)']);
  });
});
