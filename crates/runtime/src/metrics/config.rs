//! The settings of one metrics map, read from the properties under its
//! prefix: `GroupBy`, `Accept.*`, `Reject.*`, `RetainDetached`.

use regex::Regex;

use super::attributes::{is_volatile, Attributes};
use crate::properties::Properties;

/// How Ice keeps detached entries by default (`RetainDetached`).
const DEFAULT_RETAIN_DETACHED: usize = 10;

/// The settings of one map, read from the properties under its prefix.
#[derive(Clone, Debug)]
pub(crate) struct MapConfig {
    /// `GroupBy` split into attribute names and the separators between
    /// them: `parts[0]`, `separators[0]`, `parts[1]`, ...
    parts: Vec<String>,
    separators: Vec<String>,
    /// `Accept.<attribute>` rules: every one must match.
    accept: Vec<(String, Regex)>,
    /// `Reject.<attribute>` rules: none may match.
    reject: Vec<(String, Regex)>,
    /// `RetainDetached`: entries with no current object kept at most.
    pub(super) retain: usize,
    /// Whether the key or the rules use a volatile attribute (the entries
    /// of tokens are then not remembered).
    pub(super) volatile: bool,
}

impl MapConfig {
    /// Reads the settings under `prefix` (`IceMX.Metrics.V.` or
    /// `IceMX.Metrics.V.Map.M.`). An invalid regex is ignored with a
    /// warning.
    pub(crate) fn read(props: &Properties, prefix: &str) -> MapConfig {
        let group_by = props
            .get(&format!("{prefix}GroupBy"))
            .unwrap_or_else(|| "id".to_string());
        let (parts, separators) = split_group_by(&group_by);
        let retain = props.get_int_or(
            &format!("{prefix}RetainDetached"),
            DEFAULT_RETAIN_DETACHED as i64,
        );
        let accept = rules(props, &format!("{prefix}Accept."));
        let reject = rules(props, &format!("{prefix}Reject."));
        let volatile = parts.iter().any(|p| is_volatile(p))
            || accept.iter().chain(&reject).any(|(n, _)| is_volatile(n));
        MapConfig {
            parts,
            separators,
            accept,
            reject,
            retain: usize::try_from(retain).unwrap_or(0),
            volatile,
        }
    }

    /// Whether the key or the rules read attribute `name`.
    pub(crate) fn uses(&self, name: &str) -> bool {
        self.parts.iter().any(|p| p == name)
            || self
                .accept
                .iter()
                .chain(&self.reject)
                .any(|(n, _)| n == name)
    }

    /// The group key of an object, or `None` when a rule turns it away or
    /// a `GroupBy` attribute does not resolve.
    pub(crate) fn key(&self, attrs: &dyn Attributes) -> Option<String> {
        // An attribute the object does not have passes both kinds of rule.
        for (name, re) in &self.accept {
            if attrs.get(name).is_some_and(|v| !re.is_match(&v)) {
                return None;
            }
        }
        for (name, re) in &self.reject {
            if attrs.get(name).is_some_and(|v| re.is_match(&v)) {
                return None;
            }
        }
        let mut key = String::new();
        for (i, part) in self.parts.iter().enumerate() {
            key.push_str(&attrs.get(part)?);
            if let Some(sep) = self.separators.get(i) {
                key.push_str(sep);
            }
        }
        Some(key)
    }
}

/// Splits a `GroupBy` value into attribute names (letters, digits and
/// dots) and the separators between them.
fn split_group_by(group_by: &str) -> (Vec<String>, Vec<String>) {
    let mut parts = Vec::new();
    let mut separators = Vec::new();
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '.';
    let mut current = String::new();
    let mut in_name = group_by.chars().next().is_some_and(is_name);
    if !in_name && !group_by.is_empty() {
        // A leading separator: the key starts with an empty (unknown)
        // attribute, as in Ice, so nothing is grouped.
        parts.push(String::new());
    }
    for c in group_by.chars() {
        if is_name(c) != in_name {
            if in_name {
                parts.push(std::mem::take(&mut current));
            } else {
                separators.push(std::mem::take(&mut current));
            }
            in_name = !in_name;
        }
        current.push(c);
    }
    if in_name {
        parts.push(current);
    } else if !current.is_empty() {
        separators.push(current);
    }
    (parts, separators)
}

/// The `Accept.*` or `Reject.*` rules under `prefix`.
fn rules(props: &Properties, prefix: &str) -> Vec<(String, Regex)> {
    props
        .with_prefix(prefix)
        .into_iter()
        .filter_map(|(k, v)| {
            let name = k[prefix.len()..].to_string();
            match Regex::new(&v) {
                Ok(re) => Some((name, re)),
                Err(e) => {
                    tracing::warn!("ignoring metrics rule {k}={v}: {e}");
                    None
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_by_splits_names_and_separators() {
        let (p, s) = split_group_by("parent-id");
        assert_eq!(p, ["parent", "id"]);
        assert_eq!(s, ["-"]);
        let (p, s) = split_group_by("operation [mode]");
        assert_eq!(p, ["operation", "mode"]);
        assert_eq!(s, [" [", "]"]);
        let (p, _) = split_group_by("context.user");
        assert_eq!(p, ["context.user"]);
    }
}
