//! [`Doc`]: a Slice doc comment, parsed for rustdoc.

/// A parsed doc comment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Doc {
    /// The whole text, comment markers removed.
    pub text: String,
    /// The text before the first `@tag` line.
    pub summary: String,
    /// `@param name text`.
    pub params: Vec<(String, String)>,
    /// `@return text`.
    pub returns: Option<String>,
    /// `@throws Name text` / `@exception Name text`.
    pub throws: Vec<(String, String)>,
    /// `@see ...`.
    pub see: Vec<String>,
    /// `@deprecated [text]`.
    pub deprecated: Option<String>,
}

impl Doc {
    /// Splits raw doc-comment text into summary and tags.
    pub fn parse(text: &str) -> Doc {
        let mut doc = Doc {
            text: text.to_owned(),
            ..Doc::default()
        };
        enum Cur {
            Summary,
            Param,
            Return,
            Throws,
            See,
            Deprecated,
        }
        let mut cur = Cur::Summary;
        for line in text.lines() {
            let t = line.trim();
            if let Some(rest) = t.strip_prefix('@') {
                let (tag, body) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let body = body.trim();
                let (first, remainder) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
                match tag {
                    "param" => {
                        doc.params
                            .push((first.to_owned(), remainder.trim().to_owned()));
                        cur = Cur::Param;
                    }
                    "return" | "returns" => {
                        doc.returns = Some(body.to_owned());
                        cur = Cur::Return;
                    }
                    "throws" | "exception" => {
                        doc.throws
                            .push((first.to_owned(), remainder.trim().to_owned()));
                        cur = Cur::Throws;
                    }
                    "see" => {
                        doc.see.push(body.to_owned());
                        cur = Cur::See;
                    }
                    "deprecated" => {
                        doc.deprecated = Some(body.to_owned());
                        cur = Cur::Deprecated;
                    }
                    _ => {}
                }
                continue;
            }
            let append = |s: &mut String| {
                if !s.is_empty() {
                    s.push(if t.is_empty() { '\n' } else { ' ' });
                }
                s.push_str(t);
            };
            match cur {
                Cur::Summary => {
                    if !doc.summary.is_empty() {
                        doc.summary.push('\n');
                    }
                    doc.summary.push_str(t);
                }
                Cur::Param => {
                    if let Some(p) = doc.params.last_mut() {
                        append(&mut p.1);
                    }
                }
                Cur::Return => {
                    if let Some(r) = doc.returns.as_mut() {
                        append(r);
                    }
                }
                Cur::Throws => {
                    if let Some(p) = doc.throws.last_mut() {
                        append(&mut p.1);
                    }
                }
                Cur::See => {}
                Cur::Deprecated => {
                    if let Some(r) = doc.deprecated.as_mut() {
                        append(r);
                    }
                }
            }
        }
        doc.summary = doc.summary.trim().to_owned();
        doc
    }
}
