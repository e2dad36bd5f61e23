/**
 * The approvals' confirmation: a modal dialog that says in words what the decision allows, takes
 * what the route needs (an identity document, a reason), and shows a refusal where it is made:
 * the API decides the four-eyes rules, and a `403` from them (your own device, your own account,
 * a recovery you started) is said here with the server's message.
 */
import { useState, type FormEvent, type ReactNode } from 'react';
import { Dialog, Form, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { StrongroomError } from '../../../../client/src/index.js';
import { useI18n } from '../../lib/i18n.js';
import { Button, ErrorNotice } from '../../ui/forms.js';

/** The four-eyes refusals: the decision is another operator's. */
const FOUR_EYES = new Set(['DEVICE_BINDING_SELF_APPROVAL', 'RECOVERY_FOUR_EYES']);
FOUR_EYES.add('MFA_RESET_SELF_APPROVAL'); // the MFA reset queue: your own request

export function isFourEyes(err: unknown): boolean {
  return err instanceof StrongroomError && FOUR_EYES.has(err.errorCode);
}

export interface ConfirmDialogProps {
  title: string;
  /** What the decision allows, in words. */
  allows: string;
  confirmLabel: string;
  variant?: 'primary' | 'danger';
  /** Fields the route needs; their values reach `onConfirm`. */
  children?: ReactNode;
  /** Resolves when done (the dialog closes); a refusal stays in the dialog. */
  onConfirm(values: Record<string, string>): Promise<void>;
  onClose(): void;
}

export function ConfirmDialog({ title, allows, confirmLabel, variant = 'primary', children, onConfirm, onClose }: ConfirmDialogProps) {
  const { t } = useI18n();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const values = Object.fromEntries([...new FormData(e.currentTarget)].map(([k, v]) => [k, String(v).trim()]));
    setBusy(true);
    setError(null);
    try {
      await onConfirm(values);
      onClose();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <ModalOverlay className="modal-overlay" isOpen isDismissable={!busy} onOpenChange={(open) => { if (!open) onClose(); }}>
      <Modal className="modal">
        <Dialog className="dialog">
          <Heading slot="title" level={2}>{title}</Heading>
          <p className="allows">{allows}</p>
          {isFourEyes(error) ? <p className="notice notice-error" role="alert">{t('approvals.fourEyes')}</p> : null}
          <ErrorNotice error={error} />
          <Form className="form" onSubmit={(e) => void submit(e)}>
            {children}
            <div className="actions">
              <Button type="submit" variant={variant} isPending={busy}>{confirmLabel}</Button>
              <Button variant="secondary" onPress={onClose} isDisabled={busy}>{t('approvals.cancel')}</Button>
            </div>
          </Form>
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}
