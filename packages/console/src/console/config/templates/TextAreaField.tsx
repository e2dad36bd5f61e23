/** A labelled multi-line text field, as forms.tsx's `Field` is for one line (shared by the templates and the FAQ). */
import { FieldError, Label, Text, TextArea, TextField, type TextFieldProps } from 'react-aria-components';

export function TextAreaField({ label, description, errorMessage, rows = 4, ...props }: TextFieldProps & { label: string; description?: string; errorMessage?: string; rows?: number }) {
  return (
    <TextField className="field" {...props}>
      <Label>{label}</Label>
      <TextArea rows={rows} />
      {description ? <Text slot="description" className="description">{description}</Text> : null}
      <FieldError className="field-error">{errorMessage}</FieldError>
    </TextField>
  );
}
