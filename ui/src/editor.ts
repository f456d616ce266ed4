// The PromQL editor: CodeMirror 6 with Prometheus' own PromQL language package (highlighting,
// completion of functions, metric names, label names and values from this server's API, and the
// parser's errors inline).

import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap, insertNewlineAndIndent } from '@codemirror/commands';
import { bracketMatching, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { Diagnostic, linter, lintKeymap } from '@codemirror/lint';
import { EditorState, Prec, StateEffect } from '@codemirror/state';
import { drawSelection, EditorView, highlightSpecialChars, keymap, placeholder } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { PromQLExtension } from '@prometheus-io/codemirror-promql';

const highlight = HighlightStyle.define([
  { tag: tags.number, color: '#09885a' },
  { tag: tags.string, color: '#a31515' },
  { tag: tags.keyword, color: '#008080', fontWeight: 'bold' },
  { tag: tags.function(tags.variableName), color: '#008080' },
  { tag: tags.labelName, color: '#800000' },
  { tag: tags.operator },
  { tag: tags.modifier, color: '#008080', fontWeight: 'bold' },
  { tag: tags.operatorKeyword, color: '#008080', fontWeight: 'bold' },
  { tag: tags.logicOperator, color: '#008080', fontWeight: 'bold' },
  { tag: tags.comment, color: '#888', fontStyle: 'italic' },
  { tag: tags.invalid, color: 'red' },
]);

/** The server's root URL, without the trailing slash, as the completion's client wants it. */
function serverUrl(): string {
  return new URL('.', window.location.href).href.replace(/\/$/, '');
}

let promql: PromQLExtension | undefined;

/** Per editor: the error the server found in its text, shown until the text changes. */
const serverErrors = new WeakMap<EditorView, Diagnostic[]>();

/** Tells the linters to run again: the server's error changed. */
const serverErrorChanged = StateEffect.define<null>();

/** Underlines {@code d}, the server's parse error, beside what the editor's own linter finds. */
export function showServerError(view: EditorView, d: Diagnostic): void {
  serverErrors.set(view, [d]);
  view.dispatch({ effects: serverErrorChanged.of(null) });
}

function promqlExtension(): PromQLExtension {
  if (!promql) {
    promql = new PromQLExtension().setComplete({
      remote: { url: serverUrl(), lookbackInterval: 12 * 60 * 60 * 1000, cache: { maxAge: 60_000 } },
      maxMetricsMetadata: 10_000,
    });
  }
  return promql;
}

/**
 * An editor holding {@code initial}; Enter (without a completion open) calls {@code run}, Shift-Enter
 * breaks the line; {@code changed} gets every new text.
 */
export function promqlEditor(parent: HTMLElement, initial: string, run: () => void, changed: (text: string) => void): EditorView {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc: initial,
      extensions: [
        highlightSpecialChars(),
        history(),
        drawSelection(),
        bracketMatching(),
        closeBrackets(),
        autocompletion({ activateOnTypingDelay: 50 }),
        syntaxHighlighting(highlight),
        placeholder('Expression (press Shift+Enter for newlines)'),
        EditorView.lineWrapping,
        // the completion's Enter (accept) comes before ours (run the query)
        Prec.highest(keymap.of(completionKeymap)),
        Prec.highest(
          keymap.of([
            { key: 'Enter', run: () => { run(); return true; } },
            { key: 'Shift-Enter', run: insertNewlineAndIndent },
          ]),
        ),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...lintKeymap]),
        promqlExtension().asExtension(),
        linter((view) => serverErrors.get(view) ?? [], {
          needsRefresh: (u) => u.transactions.some((t) => t.effects.some((e) => e.is(serverErrorChanged))),
        }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) {
            serverErrors.delete(u.view);
            changed(u.state.doc.toString());
          }
        }),
        EditorView.contentAttributes.of({ 'aria-label': 'PromQL expression', 'data-testid': 'expr' }),
      ],
    }),
  });
}
