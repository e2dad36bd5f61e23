/**
 * A labelled group of checkboxes (React Aria's CheckboxGroup): a role's permissions, a user's
 * roles or branches. Each choice may say what it is and why it cannot be chosen.
 */
import { Checkbox, CheckboxGroup, Label, Text } from 'react-aria-components';

export interface Choice {
  id: string;
  label: string;
  description?: string;
  /** Said beside the choice: why it is disabled, or what is special about it. */
  note?: string;
  disabled?: boolean;
}

export interface ChoicesProps {
  label: string;
  description?: string;
  choices: readonly Choice[];
  value: string[];
  onChange(value: string[]): void;
  isDisabled?: boolean;
}

export function Choices({ label, description, choices, value, onChange, isDisabled }: ChoicesProps) {
  return (
    <CheckboxGroup className="choices" value={value} onChange={onChange} isDisabled={isDisabled}>
      <Label>{label}</Label>
      {description ? <Text slot="description" className="description">{description}</Text> : null}
      <div className="choices-list">
        {choices.map((c) => (
          <Checkbox key={c.id} value={c.id} className="choice" isDisabled={c.disabled}>
            <span className="choice-box" aria-hidden="true" />
            <span className="choice-text">
              <span className="choice-label">{c.label}</span>
              {c.description ? <span className="choice-description">{c.description}</span> : null}
              {c.note ? <span className="choice-note">{c.note}</span> : null}
            </span>
          </Checkbox>
        ))}
      </div>
    </CheckboxGroup>
  );
}
