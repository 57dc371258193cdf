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
