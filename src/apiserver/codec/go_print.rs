//! A decoded JSON value as Go's `fmt` prints it with `%v` (and `%s`) after apimachinery's
//! `util/json` decoded it into `interface{}`: maps as `map[k:v …]` with sorted keys, lists as
//! `[a b]`, whole numbers as int64, the rest as float64. Upstream's messages embed such
//! values (`unknown patch type: bogus in map: map[$patch:bogus]`).

use serde_json::Value;

/// `%v`.
pub fn v(value: &Value) -> String {
    print(value, &|scalar| match scalar {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        _ => number(scalar),
    })
}

/// `%s`: a string as it is; anything else as Go's bad-verb form, `%!s(int64=5)`.
pub fn s(value: &Value) -> String {
    print(value, &|scalar| match scalar {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        Value::Bool(b) => format!("%!s(bool={b})"),
        Value::Number(n) if n.is_i64() || n.is_u64() => format!("%!s(int64={})", number(scalar)),
        _ => format!("%!s(float64={})", number(scalar)),
    })
}

/// Lists and maps as fmt prints them whatever the verb (maps with sorted keys); each scalar
/// inside as `scalar` says.
fn print(value: &Value, scalar: &dyn Fn(&Value) -> String) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|i| print(i, scalar)).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let pairs: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}:{}", print(&m[*k], scalar)))
                .collect();
            format!("map[{}]", pairs.join(" "))
        }
        _ => scalar(value),
    }
}

/// util/json keeps a whole number as int64; a float64 prints as strconv's 'g' with the
/// shortest digits: an exponent (two digits at least, with its sign) below 1e-4 or from 1e21.
fn number(value: &Value) -> String {
    if let Some(i) = value.as_i64() {
        return i.to_string();
    }
    let Some(f) = value.as_f64() else {
        return value.to_string();
    };
    if f.fract() == 0.0 && f.abs() < 9.2e18 {
        return format!("{}", f as i64);
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e21).contains(&a) {
        let e = format!("{f:e}");
        let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    f.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_print_as_go_prints_them() {
        assert_eq!(
            v(&json!({"$patch": "bogus", "b": [1, 2.5, true, null], "a": {"x": "y"}})),
            "map[$patch:bogus a:map[x:y] b:[1 2.5 true <nil>]]"
        );
        assert_eq!(v(&json!(1e21)), "1e+21");
        assert_eq!(v(&json!(0.00001)), "1e-05");
        assert_eq!(v(&json!(123456.75)), "123456.75");
        assert_eq!(v(&json!(3.0)), "3");
        assert_eq!(s(&json!("bogus")), "bogus");
        assert_eq!(s(&json!(5)), "%!s(int64=5)");
        assert_eq!(s(&json!(true)), "%!s(bool=true)");
        assert_eq!(s(&json!(null)), "%!s(<nil>)");
    }
}
