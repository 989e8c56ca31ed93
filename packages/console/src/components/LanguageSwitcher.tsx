import { useId } from 'react';
import { LANGUAGES, useI18n, type Language } from '../i18n/index.tsx';

const NAMES: Record<Language, string> = { vi: 'Tiếng Việt', en: 'English' };

export function LanguageSwitcher() {
  const { language, setLanguage, t } = useI18n();
  const id = useId();
  return (
    <div className="language-switcher">
      <label htmlFor={id}>{t('app.language')}</label>
      <select id={id} value={language} onChange={(event) => setLanguage(event.target.value as Language)}>
        {LANGUAGES.map((option) => (
          <option key={option} value={option} lang={option}>
            {NAMES[option]}
          </option>
        ))}
      </select>
    </div>
  );
}
