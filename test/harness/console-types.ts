/**
 * The console's hand-written answer types against the OpenAPI document: each type of the table
 * is read from its file by the TypeScript checker (exported or not), the answer from the `paths`
 * openapi-typescript generated, and every property the console declares must be in the answer,
 * at any depth, with a type the answer's value fits (`null` included) and required when the
 * console treats it as always there. A property the answer has and the console does not read is fine.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';

/** A console type and the answer it mirrors: `at` walks into the answer (`users[]`: each of `users`). */
export interface Mirror {
  file: string;
  type: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  status?: number;
  at?: string;
}

/** Every disagreement, as `Type.property (file; METHOD path status): what`; empty when none. */
export function mirrorProblems(generatedPaths: string, mirrors: readonly Mirror[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'strongroom-console-types-'));
  try {
    const api = join(dir, 'api.d.ts');
    writeFileSync(api, generatedPaths);
    const files = [...new Set(mirrors.map((m) => resolve(m.file)))];
    const program = ts.createProgram([api, ...files], {
      strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
      jsx: ts.JsxEmit.ReactJSX, skipLibCheck: true, types: ['node'],
    });
    const checker = program.getTypeChecker();
    const paths = checker.getTypeAtLocation(declaration(program.getSourceFile(api)!, 'paths'));
    return mirrors.flatMap((m) => {
      const where = `${m.file}; ${m.method.toUpperCase()} ${m.path} ${m.status ?? 200}${m.at ? ` ${m.at}` : ''}`;
      const steps = [m.path, m.method, 'responses', String(m.status ?? 200), 'content', 'application/json', ...(m.at ? m.at.split('.') : [])];
      const answer = steps.reduce<ts.Type | undefined>((t, step) => (t === undefined ? undefined : walk(checker, t, step)), paths);
      if (answer === undefined) return [`${m.type} (${where}): not in the document`];
      const mine = checker.getTypeAtLocation(declaration(program.getSourceFile(resolve(m.file))!, m.type));
      return deeper(checker, mine, answer, m.type).map((p) => p.replace(/^([^:]*):/, `$1 (${where}):`));
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The interface or type alias named `name` at the top of a file (exported or not). */
function declaration(file: ts.SourceFile, name: string): ts.Node {
  const found = file.statements.find((s) => (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) && s.name.text === name) as ts.InterfaceDeclaration | undefined;
  if (!found) throw new Error(`${file.fileName}: no type ${name}`);
  return found.name;
}

/** A property of an answer (`name[]`: its elements), null and undefined set aside. */
function walk(checker: ts.TypeChecker, type: ts.Type, step: string): ts.Type | undefined {
  const name = step.replace(/\[\]$/, '');
  const symbol = checker.getNonNullableType(type).getProperty(name);
  if (symbol === undefined) return undefined;
  const value = checker.getNonNullableType(checker.getTypeOfSymbol(symbol));
  return step.endsWith('[]') ? elementOf(checker, value) : value;
}

function elementOf(checker: ts.TypeChecker, type: ts.Type): ts.Type | undefined {
  return checker.isArrayType(type) ? checker.getTypeArguments(type as ts.TypeReference)[0] : undefined;
}

/** A plain object type with named properties (not an array, a union, a primitive or a record). */
function isObject(checker: ts.TypeChecker, type: ts.Type): boolean {
  return (type.flags & ts.TypeFlags.Object) !== 0 && !checker.isArrayType(type) && type.getProperties().length > 0;
}

function compare(checker: ts.TypeChecker, mine: ts.Type, answer: ts.Type, name: string): string[] {
  const problems: string[] = [];
  for (const property of mine.getProperties()) {
    const at = `${name}.${property.name}`;
    const theirs = answer.getProperty(property.name);
    if (theirs === undefined) {
      problems.push(`${at}: not in the answer`);
      continue;
    }
    const optional = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Optional) !== 0;
    if (!optional(property) && optional(theirs)) {
      problems.push(`${at}: always there for the console, optional in the answer`);
      continue;
    }
    const want = checker.getTypeOfSymbol(property);
    const got = checker.getTypeOfSymbol(theirs);
    if ((want.flags & ts.TypeFlags.Any) !== 0) {
      problems.push(`${at}: any (a type the checker could not resolve?), which would fit anything`);
      continue;
    }
    if (!checker.isTypeAssignableTo(got, want)) {
      problems.push(`${at}: the answer's ${checker.typeToString(got)} does not fit the console's ${checker.typeToString(want)}`);
      continue;
    }
    problems.push(...deeper(checker, checker.getNonNullableType(want), checker.getNonNullableType(got), at));
  }
  return problems;
}

/**
 * Into objects and arrays of objects, so an extra optional property deeper down is caught too.
 * An answer of several shapes (anyOf) is compared with the one closest to the console's type.
 */
function deeper(checker: ts.TypeChecker, want: ts.Type, got: ts.Type, at: string): string[] {
  if (isObject(checker, want)) {
    const tries = (got.isUnion() ? got.types : [got]).filter((g) => isObject(checker, g)).map((g) => compare(checker, want, g, at));
    return tries.sort((a, b) => a.length - b.length)[0] ?? [];
  }
  const [w, g] = [elementOf(checker, want), elementOf(checker, got)];
  return w && g ? deeper(checker, checker.getNonNullableType(w), checker.getNonNullableType(g), `${at}[]`) : [];
}
