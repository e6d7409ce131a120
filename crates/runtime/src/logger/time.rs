//! Timestamps of log messages, and Ice's date format for them
//! (`%m/%d/%y %H:%M:%S.mmm`, local time where the platform says it).

use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch.
pub(crate) fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `micros` as `MM/DD/YY HH:MM:SS.mmm`.
pub(crate) fn date_time(micros: i64) -> String {
    let secs = micros.div_euclid(1_000_000);
    let ms = micros.rem_euclid(1_000_000) / 1000;
    let (y, mo, d, h, mi, s) = civil(secs);
    format!(
        "{mo:02}/{d:02}/{:02} {h:02}:{mi:02}:{s:02}.{ms:03}",
        y.rem_euclid(100)
    )
}

/// Local time (`localtime_r`).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn civil(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let t = secs as libc::time_t;
    // SAFETY: `tm` is plain data that localtime_r fills in; both pointers
    // are valid for the call.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if !ok {
        return utc(secs);
    }
    (
        i64::from(tm.tm_year) + 1900,
        (tm.tm_mon + 1) as u32,
        tm.tm_mday as u32,
        tm.tm_hour as u32,
        tm.tm_min as u32,
        tm.tm_sec as u32,
    )
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn civil(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    utc(secs)
}

/// UTC date and time of `secs` (the days-to-civil algorithm of the
/// proleptic Gregorian calendar).
fn utc(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), (1970, 1, 1, 0, 0, 0));
        // 2024-02-29 12:34:56 UTC.
        assert_eq!(utc(1_709_210_096), (2024, 2, 29, 12, 34, 56));
    }
}
