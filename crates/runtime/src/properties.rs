//! [`Properties`]: Ice configuration (§6.2): property files of
//! `key = value` lines, `--Name=value` arguments, `--Ice.Config=file`, and
//! programmatic settings.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};

/// A set of properties, shared by clones (setting a property through one
/// clone is seen by all). Reads take a read lock; properties are read when
/// objects are created, never per call.
#[derive(Clone, Debug, Default)]
pub struct Properties {
    map: Arc<RwLock<BTreeMap<String, String>>>,
}

impl Properties {
    /// An empty property set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses command-line arguments: every `--Name=value` (or `--Name`,
    /// meaning `1`) whose name starts with a known prefix (`Ice.`, or any
    /// name containing a dot) is set and removed from `args`;
    /// `--Ice.Config=file[,file]` loads files first (as does the
    /// `ICE_CONFIG` environment variable when no `--Ice.Config` is given),
    /// and stays set as `Ice.Config`.
    /// Other arguments are left in place.
    ///
    /// # Errors
    ///
    /// [`Error::Initialization`] if a configuration file cannot be read.
    pub fn from_args(args: &mut Vec<String>) -> Result<Self> {
        let props = Properties::new();
        let mut config = std::env::var("ICE_CONFIG").ok();
        let mut settings = Vec::new();
        args.retain(|a| {
            let Some(rest) = a.strip_prefix("--") else {
                return true;
            };
            let (k, v) = match rest.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => (rest.trim(), "1"),
            };
            if !k.contains('.') {
                return true;
            }
            if k == "Ice.Config" {
                config = Some(v.to_string());
            } else {
                settings.push((k.to_string(), v.to_string()));
            }
            false
        });
        if let Some(files) = config {
            for f in files.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                props.load(f)?;
            }
            // As Ice: the files read stay visible as `Ice.Config`.
            props.set("Ice.Config", &files);
        }
        for (k, v) in settings {
            props.set(&k, &v);
        }
        Ok(props)
    }

    /// Loads a property file.
    ///
    /// # Errors
    ///
    /// [`Error::Initialization`] if the file cannot be read.
    pub fn load(&self, path: &str) -> Result<()> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Initialization(format!("cannot read config file {path}: {e}")))?;
        self.parse(&text);
        Ok(())
    }

    /// Parses property-file text: `key = value` per line, `#` starts a
    /// comment, `\#`, `\=` and `\\` stand for the literal characters, blanks
    /// around key and value are trimmed. An empty value removes the key.
    pub fn parse(&self, text: &str) {
        for line in text.lines() {
            if let Some((k, v)) = parse_line(line) {
                if k == "Ice.Config" {
                    continue;
                }
                self.set(&k, &v);
            }
        }
    }

    /// Sets a property; an empty value removes it.
    pub fn set(&self, key: &str, value: &str) {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        if value.is_empty() {
            map.remove(key);
        } else {
            map.insert(key.to_string(), value.to_string());
        }
    }

    /// The value of a property, if set.
    pub fn get(&self, key: &str) -> Option<String> {
        let map = self.map.read().unwrap_or_else(|p| p.into_inner());
        map.get(key).cloned()
    }

    /// The value of a property, or `default`.
    pub fn get_or(&self, key: &str, default: &str) -> String {
        self.get(key).unwrap_or_else(|| default.to_string())
    }

    /// An integer property, or `default` if unset or not a number.
    pub fn get_int_or(&self, key: &str, default: i64) -> i64 {
        self.get(key)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(default)
    }

    /// A list property (whitespace or comma separated).
    pub fn get_list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .map(|v| {
                v.split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// All properties whose key starts with `prefix`.
    pub fn with_prefix(&self, prefix: &str) -> BTreeMap<String, String> {
        let map = self.map.read().unwrap_or_else(|p| p.into_inner());
        map.range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// Splits one property-file line into key and value, handling comments and
/// escapes. `None` for blank and comment lines.
fn parse_line(line: &str) -> Option<(String, String)> {
    let mut key = String::new();
    let mut value = String::new();
    let mut in_value = false;
    // Whitespace that was seen but may be trailing (only kept if followed by
    // more text).
    let mut pending_ws = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let target = if in_value { &mut value } else { &mut key };
        match c {
            '\\' => match chars.peek() {
                Some(&n @ ('#' | '=' | '\\')) => {
                    chars.next();
                    target.push_str(&pending_ws);
                    pending_ws.clear();
                    target.push(n);
                }
                _ => {
                    target.push_str(&pending_ws);
                    pending_ws.clear();
                    target.push('\\');
                }
            },
            '#' => break,
            '=' if !in_value => {
                in_value = true;
                pending_ws.clear();
            }
            c if c.is_whitespace() => {
                if !target.is_empty() {
                    pending_ws.push(c);
                }
            }
            c => {
                target.push_str(&pending_ws);
                pending_ws.clear();
                target.push(c);
            }
        }
    }
    if key.is_empty() {
        return None;
    }
    Some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_syntax() {
        let p = Properties::new();
        p.parse(
            "# comment\n  Ice.MessageSizeMax = 2048  \nA.Endpoints=tcp -h 127.0.0.1 -p 0 # trailing\n\
             Key\\=With\\#Odd = v\\#1 \\\\ x\nEmpty =\n\n",
        );
        assert_eq!(p.get_int_or("Ice.MessageSizeMax", 0), 2048);
        assert_eq!(p.get("A.Endpoints").unwrap(), "tcp -h 127.0.0.1 -p 0");
        assert_eq!(p.get("Key=With#Odd").unwrap(), "v#1 \\ x");
        assert_eq!(p.get("Empty"), None);
    }

    #[test]
    fn args_and_config_file() {
        let dir = std::env::temp_dir().join(format!("floe-props-{}", std::process::id()));
        std::fs::write(&dir, "X.Y = from file\nX.Z = 1\n").unwrap();
        let mut args = vec![
            "prog".to_string(),
            format!("--Ice.Config={}", dir.display()),
            "--X.Z=2".into(),
            "--Flag".into(),
            "--X.On".into(),
            "free".into(),
        ];
        let p = Properties::from_args(&mut args).unwrap();
        std::fs::remove_file(&dir).ok();
        assert_eq!(args, vec!["prog", "--Flag", "free"]);
        assert_eq!(p.get("X.Y").unwrap(), "from file");
        assert_eq!(p.get("X.Z").unwrap(), "2");
        assert_eq!(p.get("X.On").unwrap(), "1");
        p.set("X.Z", "3");
        assert_eq!(p.clone().get_int_or("X.Z", 0), 3);
        assert_eq!(p.with_prefix("X.").len(), 3);
    }
}
