//! An exact `resource.Quantity` parser (spec §7.3).
//!
//! A quantity is kept as `digits × 10^exp10 × 2^exp2` with an integer `digits`, so converting to
//! the scheduler's integers (`MilliValue()` for cpu, `Value()` for everything else) is exact:
//! both round *up* (away from zero), as apimachinery does. No floats anywhere.

use std::fmt;

/// A parsed quantity. Only obtainable through [`Quantity::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    digits: u128,
    exp10: i32,
    exp2: u32,
    /// How it was written: what its canonical form keeps (apimachinery's `Format`).
    format: Format,
}

/// apimachinery's `resource.Format`, read off the suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// No suffix or a decimal SI one (`m`, `k`, `M`, …).
    DecimalSi,
    /// `Ki` … `Ei`.
    BinarySi,
    /// `e<int>` / `E<int>`.
    DecimalExponent,
}

/// Why a quantity string was rejected; the caller adds file/object/field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QuantityError {
    #[error("quantity {0:?} is not a valid resource quantity")]
    Syntax(String),
    #[error("quantity {0:?} is too large to simulate")]
    TooLarge(String),
    /// kube-apiserver's ValidateNonnegativeQuantity, in its words.
    #[error("Invalid value: {0:?}: must be greater than or equal to 0")]
    Negative(String),
}

impl Quantity {
    /// Parses `[+-]digits[.digits][suffix]`, suffix one of the decimal SI letters, the binary
    /// `Ki..Ei`, or a decimal exponent `e<int>` / `E<int>`.
    pub fn parse(text: &str) -> Result<Quantity, QuantityError> {
        let bad = || QuantityError::Syntax(text.to_string());
        let big = || QuantityError::TooLarge(text.to_string());
        let s = text.trim();
        if s.is_empty() {
            return Err(bad());
        }
        let (negative, rest) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(num_end);
        let (int_part, frac_part) = match number.split_once('.') {
            Some((i, f)) => (i, f),
            None => (number, ""),
        };
        if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
            return Err(bad());
        }
        let mut digits: u128 = 0;
        let mut exp10: i32 = 0;
        for c in int_part.bytes().chain(frac_part.bytes()) {
            // Trailing precision beyond 38 digits cannot change an i64 result after rounding up
            // in a way we can represent; refuse rather than silently approximating.
            digits = digits
                .checked_mul(10)
                .and_then(|d| d.checked_add(u128::from(c - b'0')))
                .ok_or_else(big)?;
        }
        exp10 -= frac_part.len() as i32;
        let mut exp2 = 0u32;
        let format = match suffix {
            "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => Format::BinarySi,
            _ if suffix.len() > 1 => Format::DecimalExponent,
            _ => Format::DecimalSi,
        };
        match suffix {
            "" => {}
            "n" => exp10 -= 9,
            "u" => exp10 -= 6,
            "m" => exp10 -= 3,
            "k" => exp10 += 3,
            "M" => exp10 += 6,
            "G" => exp10 += 9,
            "T" => exp10 += 12,
            "P" => exp10 += 15,
            "E" => exp10 += 18,
            "Ki" => exp2 = 10,
            "Mi" => exp2 = 20,
            "Gi" => exp2 = 30,
            "Ti" => exp2 = 40,
            "Pi" => exp2 = 50,
            "Ei" => exp2 = 60,
            _ => {
                let exp = suffix
                    .strip_prefix('e')
                    .or_else(|| suffix.strip_prefix('E'))
                    .ok_or_else(bad)?;
                let body = exp.strip_prefix(['+', '-']).unwrap_or(exp);
                if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) || body.len() > 4 {
                    return Err(bad());
                }
                let e: i32 = exp.parse().map_err(|_| bad())?;
                exp10 += e;
            }
        }
        Ok(Quantity {
            negative,
            digits,
            exp10,
            exp2,
            format,
        })
    }

    /// The form kube-apiserver writes back (`Quantity.String()`, apimachinery's
    /// `CanonicalizeBytes`): `0.5` → `500m`, `1024Mi` → `1Gi`, `0.5Gi` → `512Mi`, `1000` → `1k`,
    /// `10e2` → `1e3`. Below a nano it rounds up, as parsing does upstream. None for a value
    /// too large to hold here, which is left as written.
    pub fn canonical(&self) -> Option<String> {
        let sign = if self.negative { "-" } else { "" };
        // Binary and exponent forms are capped at the largest int64 as they are parsed
        // upstream (`maxAllowed`); decimal SI ones are not.
        let capped = || (self.format != Format::DecimalSi).then(|| format!("{sign}{}", i64::MAX));
        let shifted = self.digits.checked_shl(self.exp2);
        let Some(mut d) = shifted.filter(|d| d >> self.exp2 == self.digits) else {
            return capped();
        };
        let mut e = self.exp10;
        if self.format != Format::DecimalSi && d != 0 && exceeds_i64(d, e) {
            return capped();
        }
        if e < -9 {
            let k = u32::try_from(-9 - e).ok()?;
            d = if k > 38 { 1 } else { d.div_ceil(10u128.pow(k)) };
            e = -9;
        }
        if d == 0 {
            return Some("0".into());
        }
        let mut format = self.format;
        if format == Format::BinarySi {
            // Below 1024, or not a whole number: decimal, so nothing is rounded.
            let whole = match e {
                0.. => d.checked_mul(10u128.checked_pow(e as u32)?),
                _ => {
                    let div = 10u128.checked_pow((-e) as u32)?;
                    (d % div == 0).then_some(d / div)
                }
            };
            match whole {
                Some(n) if n >= 1024 => {
                    let (mut n, mut times) = (n, 0);
                    while n >= 1024 && n % 1024 == 0 {
                        n /= 1024;
                        times += 1;
                    }
                    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"].get(times)?;
                    return Some(format!("{sign}{n}{suffix}"));
                }
                _ => format = Format::DecimalSi,
            }
        }
        while d >= 10 && d % 10 == 0 {
            d /= 10;
            e += 1;
        }
        // The exponent a multiple of three, the mantissa widened to match (Go's `%`).
        match e % 3 {
            1 | -2 => {
                d = d.checked_mul(10)?;
                e -= 1;
            }
            2 | -1 => {
                d = d.checked_mul(100)?;
                e -= 2;
            }
            _ => {}
        }
        let si = match (format, e) {
            (Format::DecimalSi, -9) => Some("n"),
            (Format::DecimalSi, -6) => Some("u"),
            (Format::DecimalSi, -3) => Some("m"),
            (_, 0) => Some(""),
            (Format::DecimalSi, 3) => Some("k"),
            (Format::DecimalSi, 6) => Some("M"),
            (Format::DecimalSi, 9) => Some("G"),
            (Format::DecimalSi, 12) => Some("T"),
            (Format::DecimalSi, 15) => Some("P"),
            (Format::DecimalSi, 18) => Some("E"),
            _ => None,
        };
        Some(match si {
            Some(suffix) => format!("{sign}{d}{suffix}"),
            None => format!("{sign}{d}e{e}"),
        })
    }

    /// `Value()`: the quantity as an integer, rounded up (away from zero).
    pub fn value(&self) -> Result<i64, QuantityError> {
        self.scaled(0)
    }

    /// `MilliValue()`: the quantity × 1000 as an integer, rounded up (away from zero).
    pub fn milli_value(&self) -> Result<i64, QuantityError> {
        self.scaled(3)
    }

    fn scaled(&self, extra10: i32) -> Result<i64, QuantityError> {
        let big = || QuantityError::TooLarge(self.to_string());
        if self.digits == 0 {
            return Ok(0);
        }
        let mut n = self.digits;
        n = n
            .checked_shl(self.exp2)
            .filter(|v| v >> self.exp2 == n)
            .ok_or_else(big)?;
        let e = self.exp10 + extra10;
        if e >= 0 {
            for _ in 0..e {
                n = n.checked_mul(10).ok_or_else(big)?;
            }
        } else {
            // Divide by 10^-e rounding up; past 38 digits of scale the result is 1 (non-zero
            // input rounds up to the smallest unit).
            let k = (-e) as u32;
            if k > 38 {
                n = 1;
            } else {
                let d = 10u128.pow(k);
                n = n.div_ceil(d);
            }
        }
        let v = i64::try_from(n).map_err(|_| big())?;
        Ok(if self.negative { -v } else { v })
    }
}

/// Whether `d × 10^e` is above the largest int64.
fn exceeds_i64(d: u128, e: i32) -> bool {
    let max = i64::MAX as u128;
    match e {
        0.. => 10u128
            .checked_pow(e as u32)
            .and_then(|p| d.checked_mul(p))
            .is_none_or(|v| v > max),
        _ => 10u128
            .checked_pow((-e) as u32)
            .and_then(|p| max.checked_mul(p))
            .is_some_and(|limit| d > limit),
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.negative { "-" } else { "" };
        write!(f, "{sign}{}e{}*2^{}", self.digits, self.exp10, self.exp2)
    }
}

/// Parses and converts in one step the way the scheduler reads a resource: cpu in milli-units,
/// everything else in whole units.
pub fn resource_value(resource: &str, text: &str) -> Result<i64, QuantityError> {
    let q = Quantity::parse(text)?;
    if resource == "cpu" {
        q.milli_value()
    } else {
        q.value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> i64 {
        Quantity::parse(s).unwrap().value().unwrap()
    }
    fn m(s: &str) -> i64 {
        Quantity::parse(s).unwrap().milli_value().unwrap()
    }

    #[test]
    fn cpu_milli_values_round_up() {
        assert_eq!(m("0.1"), 100);
        assert_eq!(m("100m"), 100);
        assert_eq!(m("1"), 1000);
        assert_eq!(m("0.0001"), 1);
        assert_eq!(m("2"), 2000);
        assert_eq!(m("4000"), 4_000_000);
        assert_eq!(m("1.5"), 1500);
        assert_eq!(m("250m"), 250);
        assert_eq!(m("1k"), 1_000_000);
        assert_eq!(m("500u"), 1);
    }

    #[test]
    fn byte_values_round_up() {
        assert_eq!(v("1.5Gi"), 1_610_612_736);
        assert_eq!(v("1e3"), 1000);
        assert_eq!(v("12E-1"), 2);
        assert_eq!(v("128974848"), 128_974_848);
        assert_eq!(v("129e6"), 129_000_000);
        assert_eq!(v("123Mi"), 128_974_848);
        assert_eq!(v("500m"), 1);
        assert_eq!(v("200Mi"), 209_715_200);
        assert_eq!(v("8G"), 8_000_000_000);
        assert_eq!(v("1Ei"), 1 << 60);
        assert_eq!(v(".5Ki"), 512);
        assert_eq!(v("5."), 5);
        assert_eq!(v("+3"), 3);
        assert_eq!(v("0"), 0);
        assert_eq!(v("1E"), 1_000_000_000_000_000_000);
    }

    #[test]
    fn canonical_forms_are_kube_apiservers() {
        let c = |s: &str| Quantity::parse(s).ok().and_then(|q| q.canonical());
        for (written, canonical) in [
            ("0.5", "500m"),
            ("1.5", "1500m"),
            ("100m", "100m"),
            ("1000", "1k"),
            ("1500", "1500"),
            ("01", "1"),
            ("1000m", "1"),
            ("0", "0"),
            ("0m", "0"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("0.5Gi", "512Mi"),
            ("1.5Gi", "1536Mi"),
            ("0.5Ki", "512"),
            ("1023", "1023"),
            ("1.5Ki", "1536"),
            ("0.1Ki", "102400m"),
            ("1e3", "1e3"),
            ("10e2", "1e3"),
            ("1E3", "1e3"),
            ("1e0", "1"),
            ("12e-1", "1200e-3"),
            ("2000k", "2M"),
            ("-0.5", "-500m"),
            ("+1k", "1k"),
            ("0.0000000001", "1n"),
            ("1.0000000001", "1000000001n"),
            ("1e100", "9223372036854775807"),
            ("-1e100", "-9223372036854775807"),
            ("99999999999999Ei", "9223372036854775807"),
            ("8Ei", "9223372036854775807"),
            ("7Ei", "7Ei"),
        ] {
            assert_eq!(c(written).as_deref(), Some(canonical), "{written}");
        }
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "", "abc", "1K", "1..2", ".", "1e", "1x", "1 Gi", "--1", "1Gii", "1.2.3",
        ] {
            assert!(Quantity::parse(s).is_err(), "{s:?} should not parse");
        }
        assert!(matches!(
            Quantity::parse("100Ei").unwrap().value(),
            Err(QuantityError::TooLarge(_))
        ));
    }
}
