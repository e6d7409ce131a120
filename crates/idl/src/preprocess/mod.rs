//! The Slice preprocessor: `#include` (with `-I` search paths and
//! `#pragma once`), `#define`/`#undef`, conditionals (`#if`, `#ifdef`,
//! `#ifndef`, `#elif`, `#else`, `#endif`, `defined(X)`; `expr.rs`), macro
//! substitution (object-like and function-like; `macros.rs`), and a line map so that later phases report positions in the
//! original files. Comments are kept: doc comments reach the parser.

mod expr;
mod macros;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostics, FileId, SourceFile, SourceMap, Span};
use expr::{tokenize, ExprParser};
use macros::{Macro, MacroTable};

/// Macro defined for every run, so Slice files can test for this compiler.
pub const PREDEFINED: &str = "__SLICE2RS__";

/// Deepest `#include` nesting accepted (guards against include cycles
/// without `#pragma once`).
const MAX_INCLUDE_DEPTH: usize = 64;

/// Largest Slice file read, in bytes.
const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// Preprocessor settings (the `-I`, `-D`, `-U` options).
#[derive(Debug, Clone, Default)]
pub struct PreprocessOptions {
    /// Directories searched for `#include`, in order.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME[=DEF]`, in order (`-DNAME` means `NAME=1`).
    pub defines: Vec<(String, String)>,
    /// `-U NAME`, applied after the defines.
    pub undefines: Vec<String>,
}

/// The result of preprocessing one main file.
#[derive(Debug, Clone, Default)]
pub struct Preprocessed {
    /// The text the parser reads (all includes inlined).
    pub text: String,
    /// Maps `text` positions back to the original files.
    pub map: SourceMap,
    /// Every included file (resolved paths), in first-inclusion order.
    pub dependencies: Vec<PathBuf>,
}

impl Preprocessed {
    /// The text with `#line` markers, as `-E` prints it.
    pub fn with_line_markers(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + 256);
        let mut expected: Option<(FileId, u32)> = None;
        for (i, line) in self.text.split('\n').enumerate() {
            let Some(&(file, no)) = self.map.origins.get(i) else {
                break;
            };
            if expected != Some((file, no)) {
                out.push_str(&format!("#line {} \"{}\"\n", no, self.map.path(file)));
            }
            out.push_str(line);
            out.push('\n');
            expected = Some((file, no + 1));
        }
        out
    }
}

#[derive(Debug, Clone, Copy)]
struct Cond {
    /// Lines in this group are emitted.
    active: bool,
    /// The enclosing group is active.
    parent_active: bool,
    /// A branch of this `#if` chain was already taken.
    taken: bool,
    /// `#else` was seen.
    seen_else: bool,
    /// Where the `#if` is, for "missing #endif".
    span: Span,
}

struct Pre<'o> {
    opts: &'o PreprocessOptions,
    macros: MacroTable,
    once: HashSet<PathBuf>,
    out: Preprocessed,
    diags: Diagnostics,
    depth: usize,
}

/// Preprocesses the file at `path`. Errors (missing includes, bad
/// directives) are returned in the [`Diagnostics`]; the text is still
/// returned as far as it could be produced.
pub fn preprocess(path: &Path, opts: &PreprocessOptions) -> (Preprocessed, Diagnostics) {
    match read_file(path) {
        Ok(src) => preprocess_source(path, &src, opts),
        Err(e) => {
            let mut d = Diagnostics::default();
            d.error_global(format!("cannot open `{}': {e}", path.display()));
            (Preprocessed::default(), d)
        }
    }
}

/// Preprocesses `source` as if it were the file `path` (includes are still
/// read from disk).
pub fn preprocess_source(
    path: &Path,
    source: &str,
    opts: &PreprocessOptions,
) -> (Preprocessed, Diagnostics) {
    let mut macros = MacroTable::default();
    macros.insert(PREDEFINED, Macro::Object("1".to_owned()));
    for (n, v) in &opts.defines {
        macros.insert(n, Macro::Object(v.clone()));
    }
    for n in &opts.undefines {
        macros.remove(n);
    }
    let mut pre = Pre {
        opts,
        macros,
        once: HashSet::new(),
        out: Preprocessed::default(),
        diags: Diagnostics::default(),
        depth: 0,
    };
    pre.out.map.files.push(SourceFile {
        path: path.to_path_buf(),
        is_main: true,
    });
    pre.file(FileId(0), path, source);
    (pre.out, pre.diags)
}

fn read_file(path: &Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    if meta.len() > MAX_FILE_SIZE {
        return Err(std::io::Error::other("file too large"));
    }
    let bytes = std::fs::read(path)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl Pre<'_> {
    fn span(&self, file: FileId, line: u32, column: u32) -> Span {
        Span { file, line, column }
    }

    fn emit(&mut self, file: FileId, line: u32, text: &str) {
        self.out.map.line_starts.push(self.out.text.len());
        self.out.map.origins.push((file, line));
        self.out.text.push_str(text);
        self.out.text.push('\n');
    }

    fn file(&mut self, file: FileId, path: &Path, source: &str) {
        let source = source.strip_prefix('\u{feff}').unwrap_or(source);
        let cleaned;
        let source = if let Some(at) = source.find('\0') {
            let line = source[..at].matches('\n').count() as u32 + 1;
            self.diags
                .warning(self.span(file, line, 1), "null character ignored");
            cleaned = source.replace('\0', " ");
            cleaned.as_str()
        } else {
            source
        };
        let mut conds: Vec<Cond> = Vec::new();
        let mut in_comment = false;
        let mut lines = source.split('\n').enumerate();
        while let Some((idx, raw)) = lines.next() {
            let lineno = idx as u32 + 1;
            let mut line = raw.strip_suffix('\r').unwrap_or(raw).to_owned();
            let active = conds.last().is_none_or(|c| c.active);
            let trimmed = line.trim_start();
            if !in_comment && trimmed.starts_with('#') {
                // Join continuation lines of a directive.
                while line.ends_with('\\') {
                    line.pop();
                    match lines.next() {
                        Some((_, next)) => line.push_str(next.strip_suffix('\r').unwrap_or(next)),
                        None => break,
                    }
                }
                let col = (line.len() - line.trim_start().len()) as u32 + 1;
                let body = strip_comments(line.trim_start()[1..].trim());
                self.directive(file, path, lineno, col, &body, &mut conds);
                continue;
            }
            in_comment = scan_comment_state(&line, in_comment);
            if active {
                let text = self.macros.expand(&line);
                self.emit(file, lineno, &text);
            }
        }
        if let Some(c) = conds.last() {
            self.diags
                .error(c.span, "unterminated conditional directive: missing #endif");
        }
    }

    fn directive(
        &mut self,
        file: FileId,
        path: &Path,
        lineno: u32,
        col: u32,
        body: &str,
        conds: &mut Vec<Cond>,
    ) {
        let span = self.span(file, lineno, col);
        let name_end = body
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(body.len());
        let (name, rest) = body.split_at(name_end);
        let rest = rest.trim();
        let active = conds.last().is_none_or(|c| c.active);
        match name {
            "if" | "ifdef" | "ifndef" => {
                let value = if !active {
                    false
                } else if name == "if" {
                    self.eval(rest, span)
                } else {
                    let id = first_ident(rest);
                    if id.is_empty() {
                        self.diags
                            .error(span, format!("#{name} without a macro name"));
                    } else if !rest[id.len()..].trim().is_empty() {
                        self.diags.error(
                            span,
                            format!(
                                "excessive tokens after #{name} {id}: `{}'",
                                rest[id.len()..].trim()
                            ),
                        );
                    }
                    self.macros.contains_key(id) == (name == "ifdef")
                };
                conds.push(Cond {
                    active: active && value,
                    parent_active: active,
                    taken: value,
                    seen_else: false,
                    span,
                });
            }
            "elif" => match conds.last_mut() {
                Some(c) if !c.seen_else => {
                    let take = c.parent_active && !c.taken;
                    let c_copy = *c;
                    let value = take && self.eval(rest, span);
                    if let Some(c) = conds.last_mut() {
                        c.active = value;
                        c.taken = c_copy.taken || value;
                    }
                }
                Some(_) => self.diags.error(span, "#elif after #else"),
                None => self.diags.error(span, "#elif without #if"),
            },
            "else" | "endif" if !rest.is_empty() => {
                self.diags
                    .error(span, format!("excessive tokens after #{name}: `{rest}'"));
                if name == "endif" {
                    conds.pop();
                }
            }
            "else" => match conds.last_mut() {
                Some(c) if !c.seen_else => {
                    c.seen_else = true;
                    c.active = c.parent_active && !c.taken;
                    c.taken = true;
                }
                Some(_) => self.diags.error(span, "#else after #else"),
                None => self.diags.error(span, "#else without #if"),
            },
            "endif" => {
                if conds.pop().is_none() {
                    self.diags.error(span, "#endif without #if");
                }
            }
            _ if !active => {}
            "" => {} // null directive
            "define" => {
                let id = first_ident(rest);
                if id.is_empty() {
                    self.diags.error(span, "#define without a macro name");
                    return;
                }
                match MacroTable::parse_definition(&rest[id.len()..]) {
                    Ok(m) => self.macros.insert(id, m),
                    Err(e) => self.diags.error(span, format!("#define {id}: {e}")),
                }
            }
            "undef" => {
                let id = first_ident(rest);
                self.macros.remove(id);
            }
            "include" => self.include(file, path, span, rest),
            "pragma" => {
                if rest == "once" {
                    self.once.insert(canonical(path));
                } else if rest.is_empty() {
                    self.diags.warning(span, "#pragma without a sub-directive");
                } else {
                    self.diags.error(span, format!("unknown #pragma `{rest}'"));
                }
            }
            "error" => self.diags.error(span, format!("#error {rest}")),
            "warning" => self.diags.warning(span, format!("#warning {rest}")),
            "line" => {}
            _ => self
                .diags
                .error(span, format!("unknown preprocessor directive `#{name}'")),
        }
    }

    fn include(&mut self, _file: FileId, path: &Path, span: Span, rest: &str) {
        let (name, quoted) = if let Some(r) = rest.strip_prefix('"') {
            match r.find('"') {
                Some(e) => (&r[..e], true),
                None => {
                    self.diags
                        .error(span, "#include expects \"FILENAME\" or <FILENAME>");
                    return;
                }
            }
        } else if let Some(r) = rest.strip_prefix('<') {
            match r.find('>') {
                Some(e) => (&r[..e], false),
                None => {
                    self.diags
                        .error(span, "#include expects \"FILENAME\" or <FILENAME>");
                    return;
                }
            }
        } else {
            self.diags
                .error(span, "#include expects \"FILENAME\" or <FILENAME>");
            return;
        };
        let mut candidates = Vec::new();
        if quoted {
            candidates.push(path.parent().unwrap_or(Path::new("")).join(name));
        }
        for dir in &self.opts.include_dirs {
            candidates.push(dir.join(name));
        }
        let Some(found) = candidates.into_iter().find(|p| p.is_file()) else {
            self.diags
                .error(span, format!("cannot find include file `{name}'"));
            return;
        };
        if self.once.contains(&canonical(&found)) {
            return;
        }
        if self.depth >= MAX_INCLUDE_DEPTH {
            self.diags.error(span, "#include nested too deeply");
            return;
        }
        let src = match read_file(&found) {
            Ok(s) => s,
            Err(e) => {
                self.diags
                    .error(span, format!("cannot open include file `{name}': {e}"));
                return;
            }
        };
        let canon = canonical(&found);
        if !self.out.dependencies.iter().any(|d| canonical(d) == canon) {
            self.out.dependencies.push(found.clone());
        }
        let id = FileId(self.out.map.files.len() as u32);
        self.out.map.files.push(SourceFile {
            path: found.clone(),
            is_main: false,
        });
        self.depth += 1;
        self.file(id, &found, &src);
        self.depth -= 1;
    }

    fn eval(&mut self, expr: &str, span: Span) -> bool {
        let mut p = ExprParser {
            toks: tokenize(expr),
            pos: 0,
            macros: &self.macros,
            error: None,
            depth: 0,
        };
        let v = p.ternary();
        if p.error.is_none() && p.pos < p.toks.len() {
            p.error = Some(format!("unexpected `{}' in #if expression", p.toks[p.pos]));
        }
        if p.toks.is_empty() {
            p.error = Some("#if with no expression".to_owned());
        }
        match p.error {
            Some(e) => {
                self.diags.error(span, e);
                false
            }
            None => v != 0,
        }
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn first_ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(s.len());
    &s[..end]
}

/// Removes `//` and `/* */` comments from a directive line.
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let line_c = rest.find("//");
        let block_c = rest.find("/*");
        match (line_c, block_c) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                break;
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                match rest[b + 2..].find("*/") {
                    Some(e) => rest = &rest[b + 2 + e + 2..],
                    None => break,
                }
            }
            _ => {
                out.push_str(rest);
                break;
            }
        }
    }
    out.trim().to_owned()
}

/// Returns whether a block comment is open at the end of `line`.
fn scan_comment_state(line: &str, mut in_comment: bool) -> bool {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if in_comment {
            if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                in_comment = false;
                i += 2;
                continue;
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            return false;
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            in_comment = true;
            i += 2;
            continue;
        }
        i += 1;
    }
    in_comment
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str, defines: &[(&str, &str)]) -> (String, Diagnostics) {
        let opts = PreprocessOptions {
            defines: defines
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            ..Default::default()
        };
        let (p, d) = preprocess_source(Path::new("t.ice"), src, &opts);
        (p.text, d)
    }

    #[test]
    fn conditionals() {
        let (t, d) = run(
            "#if defined(__SLICE2RS__) && !defined(X)\na\n#elif 1\nb\n#else\nc\n#endif\n#ifdef X\nx\n#endif",
            &[],
        );
        assert!(!d.has_errors());
        assert_eq!(t, "a\n");
        let (t, _) = run(
            "#if X > 2\na\n#elif X == 2\nb\n#else\nc\n#endif",
            &[("X", "2")],
        );
        assert_eq!(t, "b\n");
    }

    #[test]
    fn macros_and_errors() {
        let (t, _) = run("#define N 5\nconst int x = N; // N\n", &[]);
        assert_eq!(t, "const int x = 5; // N\n\n");
        let (_, d) = run("#if 1\n", &[]);
        assert!(d.has_errors());
        let (_, d) = run("#endif\n#foo\n#include <nope.ice>\n", &[]);
        assert_eq!(d.error_count(), 3);
        let (_, d) = run("#if 1/0\n#endif", &[]);
        assert!(d.has_errors());
    }

    #[test]
    fn function_like_macros_as_slice2cpp_accepts_them() {
        let (t, d) = run(
            "#define DEFAULT(X) = X\nstruct S { int i DEFAULT(5); string s DEFAULT(\"x\"); }\n",
            &[],
        );
        assert!(!d.has_errors(), "{d:?}");
        assert_eq!(t, "struct S { int i = 5; string s = \"x\"; }\n\n");
        let (_, d) = run("#define BAD(a, a) a\n", &[]);
        assert!(d.has_errors());
    }

    #[test]
    fn bom_and_nul_are_tolerated() {
        let (t, d) = run("\u{feff}module M {}\0\n", &[]);
        assert!(!d.has_errors());
        assert_eq!(t, "module M {} \n\n");
    }

    #[test]
    fn comments_hide_directives() {
        let (t, d) = run("/*\n#error x\n*/\nA", &[]);
        assert!(!d.has_errors());
        assert!(t.contains("#error x"));
    }
}
