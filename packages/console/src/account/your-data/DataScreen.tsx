/** Your data: everything the service holds about you, downloaded; and asking for your account to be deleted. */
import { Heading } from 'react-aria-components';
import { useI18n } from '../../lib/i18n.js';
import { Deletion } from './Deletion.js';
import { ExportData } from './ExportData.js';

export function DataScreen() {
  const { t } = useI18n();
  return (
    <>
      <Heading level={1}>{t('account.navData')}</Heading>
      <ExportData />
      <Deletion />
    </>
  );
}
