//! Subscription quality of service: parsing and validating the `QoS`
//! dictionary of `subscribeAndGetPublisher` the way IceStorm 3.7 does.
//!
//! Checked against a real IceStorm 3.7.8 broker:
//! - `reliability` must be absent, empty or `ordered`; anything else raises
//!   `BadQoS("invalid reliability: <value>")`. `ordered` needs a twoway
//!   subscriber proxy, else `BadQoS("ordered reliability requires a twoway proxy")`.
//! - `retryCount` is read like C `atoi` (leading integer, garbage ignored,
//!   no digits = 0). Default 0. Only −1 means "forever"; other negative
//!   values remove the subscriber at its first failure.
//! - `locatorCacheTimeout` / `connectionCached` must be numeric, else
//!   `BadQoS("invalid locator cache timeout (numeric value required): <v>")`
//!   (resp. `invalid connection cached setting ...`).
//! - Unknown keys are accepted and ignored.

use crate::types::{BadQoS, ProxyData, ProxyExt, QosDict};

/// Delivery reliability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reliability {
    /// Events are sent as soon as possible (twoway: up to 5 outstanding).
    None,
    /// One outstanding request at a time, in arrival order.
    Ordered,
}

/// A validated subscription QoS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qos {
    /// `reliability`.
    pub reliability: Reliability,
    /// `retryCount`: −1 forever, 0 remove at first failure, n retries.
    pub retry_count: i32,
    /// `locatorCacheTimeout`, applied to the subscriber proxy.
    pub locator_cache_timeout: Option<i32>,
    /// `connectionCached`, applied to the subscriber proxy.
    pub connection_cached: Option<bool>,
}

impl Default for Qos {
    fn default() -> Self {
        Qos {
            reliability: Reliability::None,
            retry_count: 0,
            locator_cache_timeout: None,
            connection_cached: None,
        }
    }
}

/// Reads an integer like C `atoi`: optional blanks, a sign, digits; stops at
/// the first non-digit; no digits gives 0; saturates instead of overflowing.
pub fn atoi(s: &str) -> i32 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = (v * 10 + i64::from(b - b'0')).min(i64::from(i32::MAX) + 1);
    }
    let v = if neg { -v } else { v };
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// `BadQoS` with IceStorm's `reason` text.
pub fn bad_qos(reason: impl Into<String>) -> BadQoS {
    BadQoS {
        reason: reason.into(),
    }
}

/// Whether `s` is a (signed) decimal integer.
fn is_numeric(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

impl Qos {
    /// Validates `dict` for a subscription through `subscriber`.
    ///
    /// # Errors
    ///
    /// [`BadQoS`] with IceStorm's reason text.
    pub fn parse(dict: &QosDict, subscriber: &ProxyData) -> Result<Qos, BadQoS> {
        let mut qos = Qos::default();
        for (key, value) in dict {
            match key.as_str() {
                "reliability" => {
                    qos.reliability = match value.as_str() {
                        "" => Reliability::None,
                        "ordered" => Reliability::Ordered,
                        other => return Err(bad_qos(format!("invalid reliability: {other}"))),
                    }
                }
                "retryCount" => qos.retry_count = atoi(value),
                "locatorCacheTimeout" => {
                    if !is_numeric(value) {
                        return Err(bad_qos(format!(
                            "invalid locator cache timeout (numeric value required): {value}"
                        )));
                    }
                    qos.locator_cache_timeout = Some(atoi(value));
                }
                "connectionCached" => {
                    if !is_numeric(value) {
                        return Err(bad_qos(format!(
                            "invalid connection cached setting (numeric value required): {value}"
                        )));
                    }
                    qos.connection_cached = Some(atoi(value) > 0);
                }
                _ => {}
            }
        }
        if qos.reliability == Reliability::Ordered && !subscriber.is_twoway() {
            return Err(bad_qos("ordered reliability requires a twoway proxy"));
        }
        Ok(qos)
    }

    /// Whether a failure with `consecutive_failures` already counted (before
    /// this one) leaves the subscriber alive (offline) rather than removed.
    pub fn may_retry(&self, consecutive_failures: u32) -> bool {
        self.retry_count == -1
            || (self.retry_count > 0 && (consecutive_failures as i64) < i64::from(self.retry_count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{direct_proxy, ProxyMode, MODE_BATCH_ONEWAY, MODE_ONEWAY};
    use floe::wire::Identity;

    fn dict(pairs: &[(&str, &str)]) -> QosDict {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn proxy(mode: ProxyMode) -> ProxyData {
        let mut p = direct_proxy(Identity::from_name("s"), vec![]);
        p.mode = mode;
        p
    }

    #[test]
    fn reliability_values() {
        let tw = proxy(ProxyMode::Twoway);
        assert_eq!(Qos::parse(&dict(&[]), &tw).unwrap(), Qos::default());
        assert_eq!(
            Qos::parse(&dict(&[("reliability", "")]), &tw)
                .unwrap()
                .reliability,
            Reliability::None
        );
        assert_eq!(
            Qos::parse(&dict(&[("reliability", "ordered")]), &tw)
                .unwrap()
                .reliability,
            Reliability::Ordered
        );
        assert_eq!(
            Qos::parse(&dict(&[("reliability", "bogus")]), &tw),
            Err(bad_qos("invalid reliability: bogus"))
        );
        for mode in [MODE_ONEWAY, MODE_BATCH_ONEWAY] {
            assert_eq!(
                Qos::parse(&dict(&[("reliability", "ordered")]), &proxy(mode)),
                Err(bad_qos("ordered reliability requires a twoway proxy"))
            );
        }
    }

    #[test]
    fn retry_count_is_atoi() {
        let tw = proxy(ProxyMode::Twoway);
        let rc = |v: &str| {
            Qos::parse(&dict(&[("retryCount", v)]), &tw)
                .unwrap()
                .retry_count
        };
        assert_eq!(rc("2"), 2);
        assert_eq!(rc("abc"), 0);
        assert_eq!(rc("2x"), 2);
        assert_eq!(rc("-1"), -1);
        assert_eq!(rc("-5"), -5);
        assert_eq!(rc(" 7"), 7);
        assert_eq!(rc("99999999999"), i32::MAX);
    }

    #[test]
    fn retry_policy() {
        let q = |n| Qos {
            retry_count: n,
            ..Qos::default()
        };
        assert!(!q(0).may_retry(0));
        assert!(q(2).may_retry(0));
        assert!(q(2).may_retry(1));
        assert!(!q(2).may_retry(2));
        assert!(q(-1).may_retry(1_000_000));
        assert!(!q(-5).may_retry(0));
    }

    #[test]
    fn numeric_proxy_settings() {
        let tw = proxy(ProxyMode::Twoway);
        assert_eq!(
            Qos::parse(&dict(&[("locatorCacheTimeout", "x")]), &tw),
            Err(bad_qos(
                "invalid locator cache timeout (numeric value required): x"
            ))
        );
        let q = Qos::parse(
            &dict(&[
                ("locatorCacheTimeout", "10"),
                ("connectionCached", "0"),
                ("foo", "bar"),
            ]),
            &tw,
        )
        .unwrap();
        assert_eq!(q.locator_cache_timeout, Some(10));
        assert_eq!(q.connection_cached, Some(false));
    }
}
