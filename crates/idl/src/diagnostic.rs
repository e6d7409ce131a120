//! Diagnostics: source positions (`Span`), the file table (`SourceMap`) that
//! maps preprocessed text back to original files, and the collector that
//! gathers every error of a run so that all of them are reported at once.

use std::fmt;
use std::path::PathBuf;

/// Index of a file in [`SourceMap::files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A position in an original (not preprocessed) Slice file; line and column
/// are 1-based, the column counts characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// The file.
    pub file: FileId,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// One Slice file that took part in a compilation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The path as found (main file as given; includes as resolved).
    pub path: PathBuf,
    /// True for the file named on the command line; false for included files.
    pub is_main: bool,
}

/// Maps offsets in the preprocessed text back to file, line and column.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    /// Every file read, main file first.
    pub files: Vec<SourceFile>,
    /// Byte offset at which each preprocessed line starts.
    pub line_starts: Vec<usize>,
    /// Origin (file, 1-based line) of each preprocessed line.
    pub origins: Vec<(FileId, u32)>,
}

impl SourceMap {
    /// The original position of byte `offset` of the preprocessed `text`.
    pub fn span_at(&self, text: &str, offset: usize) -> Span {
        if self.line_starts.is_empty() {
            return Span::default();
        }
        let idx = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts[idx];
        let offset = offset.min(text.len()).max(start);
        let column = text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(0) as u32
            + 1;
        let (file, line) = self.origins.get(idx).copied().unwrap_or_default();
        Span { file, line, column }
    }

    /// The display path of a file.
    pub fn path(&self, file: FileId) -> String {
        self.files
            .get(file.0 as usize)
            .map(|f| f.path.display().to_string())
            .unwrap_or_else(|| "<unknown>".to_owned())
    }
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Compilation fails.
    Error,
    /// Reported; compilation goes on.
    Warning,
}

/// One message about the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Where, if known (command-line problems have no position).
    pub span: Option<Span>,
    /// What is wrong.
    pub message: String,
}

/// Collects the diagnostics of a run.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    /// Everything reported so far, in order.
    pub list: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Records an error.
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.list.push(Diagnostic {
            severity: Severity::Error,
            span: Some(span),
            message: message.into(),
        });
    }

    /// Records an error that has no source position.
    pub fn error_global(&mut self, message: impl Into<String>) {
        self.list.push(Diagnostic {
            severity: Severity::Error,
            span: None,
            message: message.into(),
        });
    }

    /// Records a warning.
    pub fn warning(&mut self, span: Span, message: impl Into<String>) {
        self.list.push(Diagnostic {
            severity: Severity::Warning,
            span: Some(span),
            message: message.into(),
        });
    }

    /// True if any error (not warning) was recorded.
    pub fn has_errors(&self) -> bool {
        self.list.iter().any(|d| d.severity == Severity::Error)
    }

    /// Number of errors.
    pub fn error_count(&self) -> usize {
        self.list
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    /// Appends another collector's diagnostics.
    pub fn extend(&mut self, other: Diagnostics) {
        self.list.extend(other.list);
    }

    /// Renders every diagnostic as `file:line:col: error: message` lines.
    pub fn render(&self, map: &SourceMap) -> String {
        let mut out = String::new();
        for d in &self.list {
            out.push_str(&Rendered { d, map }.to_string());
            out.push('\n');
        }
        out
    }
}

struct Rendered<'a> {
    d: &'a Diagnostic,
    map: &'a SourceMap,
}

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match self.d.span {
            Some(s) => write!(
                f,
                "{}:{}:{}: {sev}: {}",
                self.map.path(s.file),
                s.line,
                s.column,
                self.d.message
            ),
            None => write!(f, "slice2rs: {sev}: {}", self.d.message),
        }
    }
}
