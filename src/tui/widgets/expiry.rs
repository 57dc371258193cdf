//! Validity as a countdown a person reads at a glance: "expires in 364d 5h", "EXPIRED 3d ago",
//! "not valid for another 2h 10m". Pure, with the clock passed in.

use crate::pki::CheckStatus;

/// Within this many seconds of the end, a certificate is flagged (the checks use 30 days too).
const SOON: i64 = 30 * 24 * 3600;

/// The status and the words for a validity window seen at `now` (all Unix seconds).
pub fn countdown(not_before: i64, not_after: i64, now: i64) -> (CheckStatus, String) {
    if now < not_before {
        return (
            CheckStatus::Error,
            format!("NOT YET VALID: starts in {}", span(not_before - now)),
        );
    }
    if now >= not_after {
        return (
            CheckStatus::Error,
            format!("EXPIRED {} ago", span(now - not_after)),
        );
    }
    let left = not_after - now;
    let status = if left <= SOON {
        CheckStatus::Warn
    } else {
        CheckStatus::Ok
    };
    (status, format!("expires in {}", span(left)))
}

/// At most two units of a duration, largest first: `364d 5h`, `3d`, `5h 3m`, `3m 20s`, `20s`.
pub fn span(secs: i64) -> String {
    let secs = secs.max(0);
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    let two = |big: i64, bu: &str, small: i64, su: &str| {
        if small == 0 {
            format!("{big}{bu}")
        } else {
            format!("{big}{bu} {small}{su}")
        }
    };
    if d > 0 {
        two(d, "d", h, "h")
    } else if h > 0 {
        two(h, "h", m, "m")
    } else if m > 0 {
        two(m, "m", s, "s")
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400;

    #[test]
    fn valid_expired_and_not_yet_valid() {
        let now = 1_000 * DAY;
        assert_eq!(
            countdown(now - DAY, now + 364 * DAY + 5 * 3600 + 59, now),
            (CheckStatus::Ok, "expires in 364d 5h".into())
        );
        assert_eq!(
            countdown(now - 10 * DAY, now - 3 * DAY - 60, now),
            (CheckStatus::Error, "EXPIRED 3d ago".into())
        );
        assert_eq!(
            countdown(now + 2 * 3600 + 600, now + DAY * 9, now),
            (CheckStatus::Error, "NOT YET VALID: starts in 2h 10m".into())
        );
        assert_eq!(
            countdown(now - DAY, now + 10 * DAY, now).0,
            CheckStatus::Warn
        );
    }

    #[test]
    fn spans() {
        assert_eq!(span(59), "59s");
        assert_eq!(span(61), "1m 1s");
        assert_eq!(span(3600 * 5 + 180), "5h 3m");
        assert_eq!(span(-5), "0s");
    }
}
