/**
 * The two languages: Vietnamese and English. The first of navigator.languages that is either wins
 * (Vietnamese when neither); the header's switcher overrides it and is remembered in localStorage.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { en, type MessageKey } from './en.ts';
import { vi } from './vi.ts';

export type Language = 'vi' | 'en';
export type { MessageKey };
export const LANGUAGES: readonly Language[] = ['vi', 'en'];
const STORAGE_KEY = 'tms.console.language';
const CATALOGUES = { en, vi };

export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string;

function storedLanguage(): Language | null {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return value === 'vi' || value === 'en' ? value : null;
  } catch {
    // Storage can be disabled; the browser's languages still apply.
    return null;
  }
}

export function browserLanguage(languages: readonly string[]): Language {
  for (const tag of languages) {
    const lower = tag.toLowerCase();
    if (lower.startsWith('vi')) return 'vi';
    if (lower.startsWith('en')) return 'en';
  }
  return 'vi';
}

export function translate(language: Language, key: MessageKey, values?: Record<string, string | number>): string {
  const text: string = CATALOGUES[language][key];
  if (!values) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

interface LanguageState {
  language: Language;
  setLanguage(language: Language): void;
  t: Translate;
}

const LanguageContext = createContext<LanguageState | null>(null);

export function LanguageProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<Language>(() => storedLanguage() ?? browserLanguage(navigator.languages ?? [navigator.language]));

  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);

  const setLanguage = useCallback((next: Language) => {
    setLanguageState(next);
    try {
      window.localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Not remembered, but still switched for this page.
    }
  }, []);

  const value = useMemo<LanguageState>(
    () => ({ language, setLanguage, t: (key, values) => translate(language, key, values) }),
    [language, setLanguage],
  );
  return <LanguageContext.Provider value={value}>{children}</LanguageContext.Provider>;
}

export function useI18n(): LanguageState {
  const state = useContext(LanguageContext);
  if (!state) throw new Error('useI18n outside LanguageProvider');
  return state;
}
