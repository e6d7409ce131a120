//! The text form of an [`Identity`]: `category/name`, or `name` when the
//! category is empty, with `/` escaped inside either part (§6.1).
//!
//! [`identity_to_string`] prints in any [`ToStringMode`]; `Display` prints in
//! [`ToStringMode::Unicode`], Ice's default. [`string_to_identity`] (and
//! `FromStr`) accept every mode's output plus `\xHH` and octal escapes.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::escape::{escape_string, unescape_string, ToStringMode};
use crate::identity::Identity;

/// Prints `id` as Ice's `identityToString` does in `mode`.
///
/// ```
/// use floe_wire::{identity_to_string, Identity, ToStringMode};
/// let id = Identity::new("a/b", "c/d");
/// assert_eq!(identity_to_string(&id, ToStringMode::Unicode), "c\\/d/a\\/b");
/// let id = Identity::from_name("café");
/// assert_eq!(identity_to_string(&id, ToStringMode::Ascii), "caf\\u00e9");
/// ```
pub fn identity_to_string(id: &Identity, mode: ToStringMode) -> String {
    let name = escape_string(&id.name, "/", mode);
    if id.category.is_empty() {
        name
    } else {
        let mut s = escape_string(&id.category, "/", mode);
        s.push('/');
        s.push_str(&name);
        s
    }
}

/// Parses an identity as Ice's `stringToIdentity` does: the first unescaped
/// `/` separates category and name; a second one is an error.
///
/// ```
/// use floe_wire::{string_to_identity, Identity};
/// assert_eq!(string_to_identity("a\\/b/c").unwrap(), Identity::new("c", "a/b"));
/// assert_eq!(string_to_identity("x\\101").unwrap(), Identity::from_name("xA"));
/// assert!(string_to_identity("a/b/c").is_err());
/// ```
///
/// # Errors
///
/// [`Error::IdentityParse`] for a second unescaped `/`, a raw control
/// character, a malformed escape or escapes that are not UTF-8.
pub fn string_to_identity(s: &str) -> Result<Identity> {
    let err = |reason: String| Error::IdentityParse {
        input: s.to_string(),
        reason,
    };
    let bytes = s.as_bytes();
    let mut slash = None;
    for (pos, &b) in bytes.iter().enumerate() {
        if b != b'/' {
            continue;
        }
        let escapes = bytes[..pos]
            .iter()
            .rev()
            .take_while(|&&c| c == b'\\')
            .count();
        if escapes % 2 == 0 {
            if slash.is_some() {
                return Err(err(format!("unescaped '/' in identity `{s}'")));
            }
            slash = Some(pos);
        }
    }
    let part = |text: &str, what: &str| {
        unescape_string(text, "/").map_err(|r| err(format!("invalid identity {what} `{s}': {r}")))
    };
    match slash {
        None => Ok(Identity::from_name(part(s, "name")?)),
        Some(pos) => {
            let category = part(&s[..pos], "category")?;
            let name = part(&s[pos + 1..], "name")?;
            Ok(Identity::new(name, category))
        }
    }
}

impl fmt::Display for Identity {
    /// Prints the identity in [`ToStringMode::Unicode`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&identity_to_string(self, ToStringMode::Unicode))
    }
}

impl FromStr for Identity {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        string_to_identity(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `identityToString` in each mode, observed with Ice 3.7.8 (docs/protocol.md §6.1).
    #[test]
    fn identity_to_string_matches_capture() {
        let ids = [
            ("", "name"),
            ("cat", "name"),
            ("c/d", "a/b"),
            ("", "café"),
            ("", "tab\there"),
            ("", "q\"u'o"),
            ("", "back\\slash"),
            ("", "\x7f\x01"),
            ("", "sp ace"),
            ("", "😀"),
        ];
        let expected = [
            (
                ToStringMode::Unicode,
                [
                    "name",
                    "cat/name",
                    "c\\/d/a\\/b",
                    "café",
                    "tab\\there",
                    "q\\\"u\\'o",
                    "back\\\\slash",
                    "\\u007f\\u0001",
                    "sp ace",
                    "😀",
                ],
            ),
            (
                ToStringMode::Ascii,
                [
                    "name",
                    "cat/name",
                    "c\\/d/a\\/b",
                    "caf\\u00e9",
                    "tab\\there",
                    "q\\\"u\\'o",
                    "back\\\\slash",
                    "\\u007f\\u0001",
                    "sp ace",
                    "\\U0001f600",
                ],
            ),
            (
                ToStringMode::Compat,
                [
                    "name",
                    "cat/name",
                    "c\\/d/a\\/b",
                    "caf\\303\\251",
                    "tab\\there",
                    "q\\\"u\\'o",
                    "back\\\\slash",
                    "\\177\\001",
                    "sp ace",
                    "\\360\\237\\230\\200",
                ],
            ),
        ];
        for (mode, texts) in expected {
            for ((cat, name), text) in ids.iter().zip(texts) {
                let id = Identity::new(*name, *cat);
                assert_eq!(identity_to_string(&id, mode), text, "{mode:?} {id:?}");
                assert_eq!(string_to_identity(text).unwrap(), id, "round trip {text}");
            }
        }
    }

    /// `stringToIdentity`, observed with Ice 3.7.8 (docs/protocol.md §6.1).
    #[test]
    fn string_to_identity_matches_capture() {
        let cases = [
            ("a/b", "a", "b"),
            ("/b", "", "b"),
            ("a/", "a", ""),
            ("\\/x", "", "/x"),
            ("a\\/b/c", "a/b", "c"),
            ("x\\101", "", "xA"),
            ("x\\u0041", "", "xA"),
            ("x\\U00000041", "", "xA"),
            ("x\\x41", "", "xA"),
        ];
        for (text, cat, name) in cases {
            assert_eq!(
                string_to_identity(text).unwrap(),
                Identity::new(name, cat),
                "{text}"
            );
        }
    }

    #[test]
    fn errors_and_traits() {
        assert!(matches!(
            string_to_identity("a/b/c"),
            Err(Error::IdentityParse { .. })
        ));
        assert!(matches!(
            string_to_identity("a\\/b/c/"),
            Err(Error::IdentityParse { .. })
        ));
        assert!(matches!(
            string_to_identity("\\777"),
            Err(Error::IdentityParse { .. })
        ));
        // An escaped backslash before a slash leaves the slash unescaped.
        assert_eq!(
            string_to_identity("a\\\\/b").unwrap(),
            Identity::new("b", "a\\")
        );
        let id: Identity = "cat/na\\/me".parse().unwrap();
        assert_eq!(id, Identity::new("na/me", "cat"));
        assert_eq!(id.to_string(), "cat/na\\/me");
        assert_eq!(string_to_identity("").unwrap(), Identity::default());
    }
}
