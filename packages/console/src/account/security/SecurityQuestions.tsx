/**
 * Security questions: 3 chosen from the bank's list (POST /api/v1/auth/security-questions/predefined)
 * and answered, with the current password (/setup). They back a step-up and a second-factor reset,
 * never a sign-in. The API says whether some are set only by refusing a second setup (409
 * SECURITY_QUESTIONS_ALREADY_SET): the form then replaces them (POST /api/v1/auth/reset/security-questions).
 * Only an administrator removes them.
 */
import { useEffect, useState } from 'react';
import { Form, Heading, Label, ListBox, ListBoxItem, Popover, Select, SelectValue, Button as AriaButton } from 'react-aria-components';
import { StrongroomError } from '../../../../client/src/index.js';
import { useI18n } from '../../lib/i18n.js';
import { useSession } from '../../lib/session.js';
import { Button, ErrorNotice, Field, Notice } from '../../ui/forms.js';
import { fieldsOf, usePending } from './submit.js';

interface Question { id: string; text: string }
const SLOTS = [0, 1, 2] as const;

export function SecurityQuestions() {
  const { t } = useI18n();
  const { call } = useSession();
  const [questions, setQuestions] = useState<Question[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    call<{ questions: Question[] }>('POST', '/api/v1/auth/security-questions/predefined', {}).then((a) => { if (live) setQuestions(a.questions); }, (e: unknown) => { if (live) setError(e); });
    return () => {
      live = false;
    };
  }, [call]);
  return (
    <section aria-labelledby="questions-heading">
      <Heading level={2} id="questions-heading">{t('account.questions')}</Heading>
      <p>{t('account.questionsIntro')}</p>
      <ErrorNotice error={error} />
      {questions ? <QuestionsForm questions={questions} /> : error ? null : <p>{t('common.loading')}</p>}
    </section>
  );
}

function QuestionsForm({ questions }: { questions: Question[] }) {
  const { t } = useI18n();
  const { call } = useSession();
  const pending = usePending();
  const [chosen, setChosen] = useState<(string | null)[]>([null, null, null]);
  const [replace, setReplace] = useState(false);
  const [done, setDone] = useState<number | null>(null);
  const [form, setForm] = useState(0);
  const save = (fields: Record<string, string>) => void pending.run(async () => {
    setDone(null);
    const answers = SLOTS.map((i) => ({ question_id: chosen[i] ?? '', answer: fields[`answer${i}`] ?? '' }));
    const body = { answers, current_password: fields.current_password };
    try {
      setDone((await call<{ configured: number }>('POST', replace ? '/api/v1/auth/reset/security-questions' : '/api/v1/auth/security-questions/setup', body)).configured);
      setForm((n) => n + 1);
      setChosen([null, null, null]);
    } catch (err) {
      if (err instanceof StrongroomError && err.errorCode === 'SECURITY_QUESTIONS_ALREADY_SET') setReplace(true);
      throw err;
    }
  });
  return (
    <>
      {replace ? <Notice>{t('account.questionsAlreadySet')}</Notice> : null}
      {done !== null ? <Notice>{t('account.questionsSaved', { count: done })}</Notice> : null}
      <ErrorNotice error={replace && pending.error instanceof StrongroomError && pending.error.errorCode === 'SECURITY_QUESTIONS_ALREADY_SET' ? null : pending.error} />
      <Form key={form} className="form" onSubmit={(e) => save(fieldsOf(e))} aria-label={t('account.questions')}>
        {SLOTS.map((i) => (
          <div key={i} className="question">
            <Select className="field" isRequired selectedKey={chosen[i]} placeholder={t('account.chooseQuestion')}
              onSelectionChange={(key) => setChosen((c) => c.map((v, j) => (j === i ? String(key) : v)))}>
              <Label>{t('account.questionN', { n: i + 1 })}</Label>
              <AriaButton className="select-button"><SelectValue /><span aria-hidden="true">▾</span></AriaButton>
              <Popover className="popover question-popover" placement="bottom start">
                <ListBox className="listbox" items={questions.filter((q) => q.id === chosen[i] || !chosen.includes(q.id))}>
                  {(q) => <ListBoxItem id={q.id} className="listbox-item">{q.text}</ListBoxItem>}
                </ListBox>
              </Popover>
            </Select>
            <Field name={`answer${i}`} label={t('account.answerN', { n: i + 1 })} autoComplete="off" isRequired />
          </div>
        ))}
        <Field name="current_password" label={t('security.currentPassword')} type="password" autoComplete="current-password" isRequired />
        <Button type="submit" isPending={pending.busy} isDisabled={chosen.some((c) => c === null)}>{t(replace ? 'account.questionsReplace' : 'account.questionsSave')}</Button>
      </Form>
    </>
  );
}
