/** The fields of one template's params, checked as they are typed (required, min and max length). */
import { useId } from 'react';
import type { TemplateParam } from '../api-types.ts';
import { useI18n, type Translate } from '../i18n/index.tsx';

/** Characters as people count them (a Vietnamese letter with its marks is one). */
export function characterCount(value: string): number {
  return [...value].length;
}

export function paramProblem(param: TemplateParam, value: string, t: Translate): string | null {
  const length = characterCount(value);
  if (length === 0) return param.required ? t('send.required') : null;
  if (length < param.min_length) return t('send.tooShort', { min: param.min_length, length });
  if (length > param.max_length) return t('send.tooLong', { max: param.max_length, length });
  return null;
}

function ParamField({
  param,
  value,
  showProblem,
  onChange,
}: {
  param: TemplateParam;
  value: string;
  showProblem: boolean;
  onChange(value: string): void;
}) {
  const { t } = useI18n();
  const id = useId();
  const hintId = useId();
  const problem = paramProblem(param, value, t);
  const visibleProblem = showProblem ? problem : null;
  return (
    <div className="field">
      <label htmlFor={id}>
        {param.name}
        {param.required ? <span className="required"> ({t('send.requiredMark')})</span> : null}
      </label>
      <input
        id={id}
        name={`param-${param.name}`}
        value={value}
        required={param.required}
        aria-invalid={visibleProblem !== null}
        aria-describedby={hintId}
        onChange={(event) => onChange(event.target.value)}
      />
      <span id={hintId} className={visibleProblem ? 'hint hint-error' : 'hint'}>
        {visibleProblem ?? t('send.lengthHint', { min: param.min_length, max: param.max_length, type: param.type, length: characterCount(value) })}
      </span>
    </div>
  );
}

export function TemplateParamFields({
  params,
  values,
  touched,
  onChange,
}: {
  params: TemplateParam[];
  values: Record<string, string>;
  /** Names typed into (or all, after a submit attempt): their problems show. */
  touched: ReadonlySet<string> | 'all';
  onChange(name: string, value: string): void;
}) {
  const { t } = useI18n();
  if (params.length === 0) return <p className="muted">{t('send.noParams')}</p>;
  return (
    <fieldset className="params">
      <legend>{t('send.params')}</legend>
      {params.map((param) => (
        <ParamField
          key={param.name}
          param={param}
          value={values[param.name] ?? ''}
          showProblem={touched === 'all' || touched.has(param.name)}
          onChange={(value) => onChange(param.name, value)}
        />
      ))}
    </fieldset>
  );
}
