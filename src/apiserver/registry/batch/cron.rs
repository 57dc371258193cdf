//! CronJob schedules as upstream reads them: `cron.ParseStandard` of robfig/cron v3 (five
//! fields or a descriptor, its error texts word for word, since `ValidateCronJob` puts them in
//! the 422) and `SpecSchedule.Next` (the day matches when day-of-month *and* day-of-week match
//! if either is `*`, when either matches otherwise). Times are UTC.

use time::{Duration, OffsetDateTime, Time};

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

/// Whether Go's `time.LoadLocation` would find the zone (kube-apiserver embeds tzdata, so the
/// machine's zoneinfo stands in for it; UTC always exists).
pub(crate) fn known_zone(name: &str) -> bool {
    name == "UTC"
        || (!name.contains("..")
            && std::path::Path::new("/usr/share/zoneinfo")
                .join(name)
                .is_file())
}

fn has(b: u64, n: u32) -> bool {
    b & (1u64 << n) != 0
}

impl Schedule {
    /// The first activation strictly after `t` (robfig's `Next`), within five years.
    pub(crate) fn next(&self, t: OffsetDateTime) -> Option<OffsetDateTime> {
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
        let day_matches = |t: OffsetDateTime| {
            let d = has(dom, u32::from(t.day()));
            let w = has(dow, u32::from(t.weekday().number_days_from_sunday()));
            if dom & STAR != 0 || dow & STAR != 0 {
                d && w
            } else {
                d || w
            }
        };
        let mut t = t.replace_second(0).ok()?.replace_nanosecond(0).ok()? + Duration::MINUTE;
        let limit = t + Duration::days(5 * 366);
        while t < limit {
            if !has(month, u32::from(u8::from(t.month()))) {
                let (y, m) = match t.month() {
                    time::Month::December => (t.year() + 1, time::Month::January),
                    m => (t.year(), m.next()),
                };
                t = t
                    .replace_day(1)
                    .ok()?
                    .replace_time(Time::MIDNIGHT)
                    .replace_year(y)
                    .ok()?
                    .replace_month(m)
                    .ok()?;
                continue;
            }
            if !day_matches(t) {
                t = t.replace_time(Time::MIDNIGHT) + Duration::DAY;
                continue;
            }
            if !has(hour, u32::from(t.hour())) {
                t = t.replace_minute(0).ok()? + Duration::HOUR;
                continue;
            }
            if !has(minute, u32::from(t.minute())) {
                t += Duration::MINUTE;
                continue;
            }
            return Some(t);
        }
        None
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
        let t = OffsetDateTime::from_unix_timestamp(1_700_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH); // 2023-11-14T22:13:20Z, a Tuesday
        let every_minute = parse_standard("* * * * *").ok();
        let n = every_minute.and_then(|s| s.next(t));
        assert_eq!(n.map(|n| n.unix_timestamp()), Some(1_700_000_040));
        let daily = parse_standard("30 2 * * *").ok().and_then(|s| s.next(t));
        assert_eq!(
            daily.map(|n| (n.day(), n.hour(), n.minute())),
            Some((15, 2, 30))
        );
        let sunday = parse_standard("0 0 * * sun").ok().and_then(|s| s.next(t));
        assert_eq!(sunday.map(|n| n.day()), Some(19));
    }
}
