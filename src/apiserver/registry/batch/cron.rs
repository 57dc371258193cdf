//! CronJob schedules as upstream reads them: `cron.ParseStandard` of robfig/cron v3 (five
//! fields or a descriptor, its error texts word for word, since `ValidateCronJob` puts them in
//! the 422) and `SpecSchedule.Next` (the day matches when day-of-month *and* day-of-week match
//! if either is `*`, when either matches otherwise), on the wall clock of the CronJob's
//! `timeZone` (UTC without one).

use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan, Zoned};
use time::{Duration, OffsetDateTime};

/// Set when a field was `*` or `?` (robfig's `starBit`).
const STAR: u64 = 1 << 63;

struct Bounds {
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Schedule {
    /// Bit sets per field (bit n: value n), as robfig's `SpecSchedule`.
    Spec {
        minute: u64,
        hour: u64,
        dom: u64,
        month: u64,
        dow: u64,
    },
    /// `@every <duration>`, whole seconds (robfig rounds the delay down to a second, ≥ 1 s).
    Every(Duration),
}

fn bits(min: u32, max: u32, step: u32) -> u64 {
    let mut b = 0;
    let mut i = min;
    while i <= max {
        b |= 1u64 << i;
        i += step;
    }
    b
}

/// robfig's `mustParseInt`: Go's `strconv.Atoi` wording on failure, no negatives.
fn parse_int(expr: &str) -> Result<u32, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"
        ));
    }
    let n: i64 = match expr.parse() {
        Ok(n) => n,
        Err(_) => {
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range"
            ));
        }
    };
    if n < 0 {
        return Err(format!("negative number ({n}) not allowed: {expr}"));
    }
    u32::try_from(n).map_err(|_| format!("end of range ({n}) above maximum: {expr}"))
}

fn parse_int_or_name(expr: &str, r: &Bounds) -> Result<u32, String> {
    let lower = expr.to_ascii_lowercase();
    match r.names.iter().find(|(n, _)| *n == lower) {
        Some((_, v)) => Ok(*v),
        None => parse_int(expr),
    }
}

/// robfig's `getRange`: `number | number "-" number [ "/" number ]`, `*` and `?`.
fn range(expr: &str, r: &Bounds) -> Result<u64, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_high.len() == 1;
    let (start, mut end, mut extra);
    if low_high[0] == "*" || low_high[0] == "?" {
        start = r.min;
        end = r.max;
        extra = STAR;
    } else {
        start = parse_int_or_name(low_high[0], r)?;
        end = match low_high.len() {
            1 => start,
            2 => parse_int_or_name(low_high[1], r)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        extra = 0;
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let s = parse_int(range_and_step[1])?;
            if single {
                end = r.max;
            }
            if s > 1 {
                extra = 0;
            }
            s
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < r.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            r.min
        ));
    }
    if end > r.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            r.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(bits(start, end, step) | extra)
}

/// robfig's `getField`: a comma-separated list of ranges.
fn field(f: &str, r: &Bounds) -> Result<u64, String> {
    let mut b = 0;
    for expr in f.split(',').filter(|e| !e.is_empty()) {
        b |= range(expr, r)?;
    }
    Ok(b)
}

/// Go's `time.ParseDuration` for what `@every` takes: `1h30m`, `90s`, `1.5h`.
fn go_duration(s: &str) -> Result<Duration, String> {
    let invalid = || format!("time: invalid duration {s:?}");
    let mut rest = s;
    let mut total = 0f64;
    if rest.is_empty() {
        return Err(invalid());
    }
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("time: missing unit in duration {s:?}"))?;
        let v: f64 = rest[..n].parse().map_err(|_| invalid())?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..u] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            other => return Err(format!("time: unknown unit {other:?} in duration {s:?}")),
        };
        total += v * unit;
        rest = &rest[u..];
    }
    Ok(Duration::seconds_f64(total))
}

/// `cron.ParseStandard`.
pub(crate) fn parse_standard(spec: &str) -> Result<Schedule, String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let Some(i) = spec.find(' ') else {
            return Err(format!("invalid location descriptor: {spec}"));
        };
        let eq = spec.find('=').unwrap_or(0);
        let loc = &spec[eq + 1..i];
        if !known_zone(loc) {
            return Err(format!(
                "provided bad location {loc}: unknown time zone {loc}"
            ));
        }
        spec = spec[i..].trim();
    }
    if let Some(d) = spec.strip_prefix('@') {
        let star = |b: &Bounds| bits(b.min, b.max, 1) | STAR;
        let at = |m: u64, h: u64, dom: u64, month: u64, dow: u64| Schedule::Spec {
            minute: m,
            hour: h,
            dom,
            month,
            dow,
        };
        return match d {
            "yearly" | "annually" => Ok(at(1, 1, 1 << 1, 1 << 1, star(&DOW))),
            "monthly" => Ok(at(1, 1, 1 << 1, star(&MONTHS), star(&DOW))),
            "weekly" => Ok(at(1, 1, star(&DOM), star(&MONTHS), 1)),
            "daily" | "midnight" => Ok(at(1, 1, star(&DOM), star(&MONTHS), star(&DOW))),
            "hourly" => Ok(at(1, star(&HOURS), star(&DOM), star(&MONTHS), star(&DOW))),
            _ => match d.strip_prefix("every ") {
                Some(dur) => go_duration(dur)
                    .map(|x| Schedule::Every(x.max(Duration::SECOND)))
                    .map_err(|e| format!("failed to parse duration {spec}: {e}")),
                None => Err(format!("unrecognized descriptor: {spec}")),
            },
        };
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    Ok(Schedule::Spec {
        minute: field(fields[0], &MINUTES)?,
        hour: field(fields[1], &HOURS)?,
        dom: field(fields[2], &DOM)?,
        month: field(fields[3], &MONTHS)?,
        dow: field(fields[4], &DOW)?,
    })
}

/// The zone a CronJob's `timeZone` names, as Go's `time.LoadLocation` finds it (kube-apiserver
/// embeds the IANA tzdb; the machine's stands in for it), or why not; UTC without one.
pub(crate) fn zone(name: Option<&str>) -> Result<TimeZone, String> {
    match name {
        None | Some("UTC") => Ok(TimeZone::UTC),
        Some(n) if n.contains("..") || n.starts_with('/') => Err(format!("invalid location {n}")),
        // Go reads the name as a file path: case counts, where jiff's lookup ignores it.
        Some(n) => TimeZone::get(n)
            .ok()
            .filter(|tz| tz.iana_name() == Some(n))
            .ok_or_else(|| format!("unknown time zone {n}")),
    }
}

/// Whether `zone` finds the name.
pub(crate) fn known_zone(name: &str) -> bool {
    zone(Some(name)).is_ok()
}

fn has(b: u64, n: i8) -> bool {
    u32::try_from(n).is_ok_and(|n| n < 64 && b & (1u64 << n) != 0)
}

impl Schedule {
    /// The first activation strictly after `t` (robfig's `SpecSchedule.Next`), its fields read
    /// on the wall clock of `tz`, within five years. Like robfig's, it steps whole days on the
    /// calendar and hours and minutes on the clock, so across a daylight-saving change a time
    /// the clock skips never comes and one it repeats can come twice.
    pub(crate) fn next(&self, t: OffsetDateTime, tz: &TimeZone) -> Option<OffsetDateTime> {
        let (minute, hour, dom, month, dow) = match self {
            Schedule::Every(d) => {
                let t = t.replace_nanosecond(0).ok()?;
                return Some(t + *d);
            }
            Schedule::Spec {
                minute,
                hour,
                dom,
                month,
                dow,
            } => (*minute, *hour, *dom, *month, *dow),
        };
        let day_matches = |z: &Zoned| {
            let d = has(dom, z.day());
            let w = has(dow, z.weekday().to_sunday_zero_offset());
            if dom & STAR != 0 || dow & STAR != 0 {
                d && w
            } else {
                d || w
            }
        };
        let start = Timestamp::from_second(t.unix_timestamp()).ok()?;
        // The upcoming second (the standard parser's seconds field is always 0).
        let mut z = start.to_zoned(tz.clone()).checked_add(1.second()).ok()?;
        let year_limit = z.year() + 5;
        let mut added = false;
        'wrap: loop {
            if z.year() > year_limit {
                return None;
            }
            while !has(month, z.month()) {
                if !added {
                    added = true;
                    z = z
                        .with()
                        .day(1)
                        .time(jiff::civil::Time::midnight())
                        .build()
                        .ok()?;
                }
                z = z.checked_add(1.month()).ok()?;
                if z.month() == 1 {
                    continue 'wrap;
                }
            }
            while !day_matches(&z) {
                if !added {
                    added = true;
                    z = z.with().time(jiff::civil::Time::midnight()).build().ok()?;
                }
                z = z.checked_add(1.day()).ok()?;
                // A day that does not start at midnight (a daylight-saving change at 00:00).
                if z.hour() != 0 {
                    let h = i64::from(z.hour());
                    let fix = if h > 12 { 24 - h } else { -h };
                    z = z.checked_add(fix.hours()).ok()?;
                }
                if z.day() == 1 {
                    continue 'wrap;
                }
            }
            while !has(hour, z.hour()) {
                if !added {
                    added = true;
                    z = z
                        .with()
                        .minute(0)
                        .second(0)
                        .subsec_nanosecond(0)
                        .build()
                        .ok()?;
                }
                z = z.checked_add(1.hour()).ok()?;
                if z.hour() == 0 {
                    continue 'wrap;
                }
            }
            while !has(minute, z.minute()) {
                if !added {
                    added = true;
                    z = z.with().second(0).subsec_nanosecond(0).build().ok()?;
                }
                z = z.checked_add(1.minute()).ok()?;
                if z.minute() == 0 {
                    continue 'wrap;
                }
            }
            while z.second() != 0 || z.subsec_nanosecond() != 0 {
                if !added {
                    added = true;
                    z = z.with().subsec_nanosecond(0).build().ok()?;
                }
                z = z.checked_add(1.second()).ok()?;
                if z.second() == 0 {
                    continue 'wrap;
                }
            }
            return OffsetDateTime::from_unix_timestamp(z.timestamp().as_second()).ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> String {
        parse_standard(s).err().unwrap_or_default()
    }

    #[test]
    fn robfigs_error_texts() {
        assert_eq!(err("bad"), "expected exactly 5 fields, found 1: [bad]");
        assert_eq!(
            err("70 * * * *"),
            "end of range (70) above maximum (59): 70"
        );
        assert_eq!(
            err("x * * * *"),
            r#"failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax"#
        );
        assert_eq!(
            err("* * 0 * *"),
            "beginning of range (0) below minimum (1): 0"
        );
        assert_eq!(err("@fortnightly"), "unrecognized descriptor: @fortnightly");
        assert_eq!(
            err("*/0 * * * *"),
            "step of range should be a positive number: */0"
        );
        assert!(parse_standard("*/5 * * * mon-fri").is_ok());
        assert!(parse_standard("@hourly").is_ok());
        assert!(parse_standard("@every 1h30m").is_ok());
    }

    #[test]
    fn next_activations() {
        let utc = TimeZone::UTC;
        let t = OffsetDateTime::from_unix_timestamp(1_700_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH); // 2023-11-14T22:13:20Z, a Tuesday
        let every_minute = parse_standard("* * * * *").ok();
        let n = every_minute.and_then(|s| s.next(t, &utc));
        assert_eq!(n.map(|n| n.unix_timestamp()), Some(1_700_000_040));
        let daily = parse_standard("30 2 * * *")
            .ok()
            .and_then(|s| s.next(t, &utc));
        assert_eq!(
            daily.map(|n| (n.day(), n.hour(), n.minute())),
            Some((15, 2, 30))
        );
        let sunday = parse_standard("0 0 * * sun")
            .ok()
            .and_then(|s| s.next(t, &utc));
        assert_eq!(sunday.map(|n| n.day()), Some(19));
        let yearly = parse_standard("@yearly").ok().and_then(|s| s.next(t, &utc));
        assert_eq!(
            yearly.map(|n| (n.year(), u8::from(n.month()), n.day())),
            Some((2024, 1, 1))
        );
    }

    /// robfig's `TestNext` cases with a location, in this shape: the fields are the zone's
    /// wall clock, and a daylight-saving change skips or repeats what its clock does.
    #[test]
    fn next_activations_in_a_time_zone() {
        let ny = zone(Some("America/New_York")).expect("the system tzdb (.ci/run installs tzdata)");
        let at = |s: &str| {
            OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        };
        let next = |spec: &str, from: &str| {
            parse_standard(spec)
                .ok()
                .and_then(|s| s.next(at(from), &ny))
                .map(crate::apiserver::util::rfc3339)
        };
        // 09:00 in New York is 14:00 UTC in winter, 13:00 in summer.
        assert_eq!(
            next("0 9 * * *", "2026-01-10T12:00:00Z").as_deref(),
            Some("2026-01-10T14:00:00Z")
        );
        assert_eq!(
            next("0 9 * * *", "2026-07-10T12:00:00Z").as_deref(),
            Some("2026-07-10T13:00:00Z")
        );
        // 2026-03-08 02:30 does not exist in New York: the next is the day after.
        assert_eq!(
            next("30 2 * * *", "2026-03-08T05:00:00Z").as_deref(),
            Some("2026-03-09T06:30:00Z")
        );
        // 2026-11-01 01:30 happens twice: both come.
        assert_eq!(
            next("30 1 * * *", "2026-11-01T05:00:00Z").as_deref(),
            Some("2026-11-01T05:30:00Z")
        );
        assert_eq!(
            next("30 1 * * *", "2026-11-01T05:30:00Z").as_deref(),
            Some("2026-11-01T06:30:00Z")
        );
        assert!(zone(Some("Mars/Olympus_Mons")).is_err());
        assert!(
            zone(Some("america/new_york")).is_err(),
            "case counts, as in Go"
        );
        assert!(zone(Some("../etc/passwd")).is_err());
        assert!(known_zone("UTC"));
    }
}
