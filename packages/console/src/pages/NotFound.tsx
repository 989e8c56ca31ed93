import { PageHeading } from '../components/common.tsx';
import { useI18n } from '../i18n/index.tsx';
import { Link } from '../router.tsx';

export function NotFoundPage() {
  const { t } = useI18n();
  return (
    <section>
      <PageHeading title={t('notFound.title')}>{t('notFound.title')}</PageHeading>
      <p>{t('notFound.text')}</p>
      <p>
        <Link to="/">{t('nav.overview')}</Link>
      </p>
    </section>
  );
}
