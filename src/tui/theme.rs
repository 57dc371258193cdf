//! Themes: semantic roles (text, ok, warn, …) mapped to styles, read from YAML.
//! The three themes in `themes/` are compiled in so the binary works from any directory;
//! `--theme PATH` reads any other file. Every role is required so a theme can never leave a
//! part of the screen unstyled by accident.

use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The built-in themes, by the name `--theme` accepts.
pub const BUILTIN: [(&str, &str); 3] = [
    ("default", include_str!("../../themes/default.yaml")),
    ("light", include_str!("../../themes/light.yaml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.yaml"),
    ),
];

/// Styles by role. Views never name a colour, only a role.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    pub text: Style,
    pub muted: Style,
    pub accent: Style,
    pub title: Style,
    pub label: Style,
    pub border: Style,
    pub border_focus: Style,
    pub selection: Style,
    pub tab: Style,
    pub tab_active: Style,
    pub status_bar: Style,
    pub key_hint: Style,
    pub ok: Style,
    pub warn: Style,
    pub error: Style,
    pub bar_used: Style,
    pub bar_pod: Style,
    pub bar_free: Style,
    pub score_a: Style,
    pub score_b: Style,
    pub winner: Style,
    pub greyed: Style,
    pub caption: Style,
}

#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("--theme {0}: not a built-in theme (default, light, high-contrast) and no such file")]
    NotFound(String),
    #[error("theme {path}: cannot read: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("theme {path}: {reason}")]
    Invalid { path: String, reason: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: String,
    roles: Roles,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Roles {
    text: StyleSpec,
    muted: StyleSpec,
    accent: StyleSpec,
    title: StyleSpec,
    label: StyleSpec,
    border: StyleSpec,
    border_focus: StyleSpec,
    selection: StyleSpec,
    tab: StyleSpec,
    tab_active: StyleSpec,
    status_bar: StyleSpec,
    key_hint: StyleSpec,
    ok: StyleSpec,
    warn: StyleSpec,
    error: StyleSpec,
    bar_used: StyleSpec,
    bar_pod: StyleSpec,
    bar_free: StyleSpec,
    score_a: StyleSpec,
    score_b: StyleSpec,
    winner: StyleSpec,
    greyed: StyleSpec,
    caption: StyleSpec,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<ColorSpec>,
    bg: Option<ColorSpec>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underlined: bool,
    #[serde(default)]
    reversed: bool,
    #[serde(default)]
    dim: bool,
}

/// A colour as written in a theme; parsed while deserializing so a typo names its line.
struct ColorSpec(Color);

impl<'de> Deserialize<'de> for ColorSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = serde_yaml::Value::deserialize(d)?;
        let parsed = match &raw {
            serde_yaml::Value::Number(n) => n
                .as_u64()
                .and_then(|i| u8::try_from(i).ok())
                .map(Color::Indexed),
            serde_yaml::Value::String(s) => parse_color(s),
            _ => None,
        };
        parsed.map(ColorSpec).ok_or_else(|| {
            let shown = serde_yaml::to_string(&raw).unwrap_or_default();
            serde::de::Error::custom(format!(
                "unknown colour {:?}: use a name (black, red, green, yellow, blue, magenta, cyan, \
                 gray, dark_gray, light_red … white, reset), \"#rrggbb\" or an index 0-255",
                shown.trim()
            ))
        })
    }
}

fn parse_color(s: &str) -> Option<Color> {
    let s = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() != 6 {
            return None;
        }
        let v = u32::from_str_radix(hex, 16).ok()?;
        return Some(Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
    }
    let c = match s.as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "dark_gray" | "dark_grey" => Color::DarkGray,
        "light_red" => Color::LightRed,
        "light_green" => Color::LightGreen,
        "light_yellow" => Color::LightYellow,
        "light_blue" => Color::LightBlue,
        "light_magenta" => Color::LightMagenta,
        "light_cyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return None,
    };
    Some(c)
}

impl StyleSpec {
    fn style(&self) -> Style {
        let mut style = Style::default();
        if let Some(c) = &self.fg {
            style = style.fg(c.0);
        }
        if let Some(c) = &self.bg {
            style = style.bg(c.0);
        }
        let flags = [
            (self.bold, Modifier::BOLD),
            (self.italic, Modifier::ITALIC),
            (self.underlined, Modifier::UNDERLINED),
            (self.reversed, Modifier::REVERSED),
            (self.dim, Modifier::DIM),
        ];
        for (on, m) in flags {
            if on {
                style = style.add_modifier(m);
            }
        }
        style
    }
}

impl Theme {
    /// Parses theme YAML; `origin` names the file (or built-in) in messages.
    pub fn parse(origin: &str, yaml: &str) -> Result<Theme, ThemeError> {
        let file: ThemeFile = serde_yaml::from_str(yaml).map_err(|e| ThemeError::Invalid {
            path: origin.to_string(),
            reason: e.to_string(),
        })?;
        let r = &file.roles;
        Ok(Theme {
            name: file.name,
            text: r.text.style(),
            muted: r.muted.style(),
            accent: r.accent.style(),
            title: r.title.style(),
            label: r.label.style(),
            border: r.border.style(),
            border_focus: r.border_focus.style(),
            selection: r.selection.style(),
            tab: r.tab.style(),
            tab_active: r.tab_active.style(),
            status_bar: r.status_bar.style(),
            key_hint: r.key_hint.style(),
            ok: r.ok.style(),
            warn: r.warn.style(),
            error: r.error.style(),
            bar_used: r.bar_used.style(),
            bar_pod: r.bar_pod.style(),
            bar_free: r.bar_free.style(),
            score_a: r.score_a.style(),
            score_b: r.score_b.style(),
            winner: r.winner.style(),
            greyed: r.greyed.style(),
            caption: r.caption.style(),
        })
    }

    /// A built-in theme by name.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, yaml) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        // The built-ins are tested to parse; should one ever fail, fall through to None.
        Theme::parse(&format!("built-in theme '{name}'"), yaml).ok()
    }

    /// `--theme NAME|PATH`: a built-in name first, else a file.
    pub fn load(arg: Option<&str>) -> Result<Theme, ThemeError> {
        let arg = arg.unwrap_or("default");
        if let Some(t) = Theme::builtin(arg) {
            return Ok(t);
        }
        let path = Path::new(arg);
        if !path.exists() {
            return Err(ThemeError::NotFound(arg.to_string()));
        }
        let text = std::fs::read_to_string(path).map_err(|e| ThemeError::Unreadable {
            path: arg.to_string(),
            reason: e.to_string(),
        })?;
        Theme::parse(arg, &text)
    }

    /// The theme as NO_COLOR asks: no colours at all, only bold/reverse/underline, so the
    /// cursor and the active tab stay visible; statuses still carry their ✓ ! ✗ symbols.
    pub fn without_color(&self) -> Theme {
        let strip = |s: Style| Style {
            fg: None,
            bg: None,
            underline_color: None,
            ..s
        };
        let plain = |s: Style| strip(s).remove_modifier(Modifier::REVERSED);
        Theme {
            name: format!("{} (NO_COLOR)", self.name),
            text: plain(self.text),
            muted: plain(self.muted),
            accent: plain(self.accent).add_modifier(Modifier::BOLD),
            title: plain(self.title).add_modifier(Modifier::BOLD),
            label: plain(self.label),
            border: plain(self.border),
            border_focus: plain(self.border_focus).add_modifier(Modifier::BOLD),
            selection: Style::default().add_modifier(Modifier::REVERSED),
            tab: plain(self.tab),
            tab_active: Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            status_bar: Style::default().add_modifier(Modifier::REVERSED),
            key_hint: plain(self.key_hint).add_modifier(Modifier::BOLD),
            ok: plain(self.ok),
            warn: plain(self.warn).add_modifier(Modifier::BOLD),
            error: plain(self.error).add_modifier(Modifier::BOLD),
            bar_used: plain(self.bar_used),
            bar_pod: plain(self.bar_pod).add_modifier(Modifier::BOLD),
            bar_free: plain(self.bar_free),
            score_a: plain(self.score_a),
            score_b: plain(self.score_b),
            winner: Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD),
            greyed: plain(self.greyed).add_modifier(Modifier::DIM),
            caption: plain(self.caption).add_modifier(Modifier::BOLD),
        }
    }

    /// `Theme::load` then NO_COLOR, as the binary does it.
    pub fn for_terminal(arg: Option<&str>) -> Result<Theme, ThemeError> {
        let theme = Theme::load(arg)?;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Ok(if no_color {
            theme.without_color()
        } else {
            theme
        })
    }
}

/// The theme outside presenter mode and the one in it: high-contrast while `P` is on (it reads
/// from the back of the room) unless `--theme` chose one for both.
#[derive(Debug, Clone)]
pub struct Themes {
    pub normal: Theme,
    pub presenter: Theme,
}

impl Themes {
    pub fn for_terminal(arg: Option<&str>) -> Result<Themes, ThemeError> {
        let normal = Theme::for_terminal(arg)?;
        let presenter = match arg {
            Some(_) => normal.clone(),
            None => Theme::for_terminal(Some("high-contrast"))?,
        };
        Ok(Themes { normal, presenter })
    }

    pub fn pick(&self, present: bool) -> &Theme {
        if present {
            &self.presenter
        } else {
            &self.normal
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        // Only reached if the compiled-in default were broken, which a unit test rules out.
        Theme::builtin("default").unwrap_or_else(|| Theme {
            name: "fallback".into(),
            text: Style::default(),
            muted: Style::default(),
            accent: Style::default(),
            title: Style::default(),
            label: Style::default(),
            border: Style::default(),
            border_focus: Style::default(),
            selection: Style::default().add_modifier(Modifier::REVERSED),
            tab: Style::default(),
            tab_active: Style::default().add_modifier(Modifier::REVERSED),
            status_bar: Style::default().add_modifier(Modifier::REVERSED),
            key_hint: Style::default(),
            ok: Style::default(),
            warn: Style::default(),
            error: Style::default(),
            bar_used: Style::default(),
            bar_pod: Style::default(),
            bar_free: Style::default(),
            score_a: Style::default(),
            score_b: Style::default(),
            winner: Style::default(),
            greyed: Style::default(),
            caption: Style::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presenter_mode_is_drawn_high_contrast_unless_a_theme_was_chosen() {
        let themes = Themes::for_terminal(None).expect("built-in");
        let high = Theme::for_terminal(Some("high-contrast")).expect("built-in");
        assert_eq!(themes.pick(true), &high);
        assert_eq!(
            themes.pick(false),
            &Theme::for_terminal(None).expect("built-in")
        );
        assert_ne!(themes.pick(true), themes.pick(false));
        let light = Themes::for_terminal(Some("light")).expect("built-in");
        assert_eq!(light.pick(true), light.pick(false));
        assert_eq!(light.pick(true).name, "light");
    }

    #[test]
    fn every_builtin_parses() {
        for (name, yaml) in BUILTIN {
            let t = Theme::parse(name, yaml).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.name, name);
        }
    }

    #[test]
    fn missing_role_is_named() {
        let yaml = BUILTIN[0].1.replace("  warn:", "  # warn:");
        let err = Theme::parse("t.yaml", &yaml).unwrap_err().to_string();
        assert!(
            err.contains("t.yaml") && err.contains("missing field `warn`"),
            "{err}"
        );
    }

    #[test]
    fn unknown_colour_is_named_with_its_line() {
        let yaml = BUILTIN[0].1.replace("fg: green", "fg: greenish");
        let err = Theme::parse("t.yaml", &yaml).unwrap_err().to_string();
        assert!(
            err.contains("unknown colour") && err.contains("greenish"),
            "{err}"
        );
        assert!(err.contains("line"), "{err}");
    }

    #[test]
    fn unknown_role_and_bad_yaml_are_errors() {
        let yaml = format!("{}  sparkle: {{ fg: red }}\n", BUILTIN[0].1);
        assert!(Theme::parse("t", &yaml).is_err());
        assert!(Theme::parse("t", "roles: [unclosed").is_err());
    }

    #[test]
    fn colours_parse() {
        assert_eq!(parse_color("#ff8000"), Some(Color::Rgb(255, 128, 0)));
        assert_eq!(parse_color("Dark-Gray"), Some(Color::DarkGray));
        assert_eq!(parse_color("#fff"), None);
        assert_eq!(parse_color("mauve"), None);
    }

    #[test]
    fn no_color_strips_colours_but_keeps_the_cursor_visible() {
        let t = Theme::default().without_color();
        for s in [t.text, t.ok, t.warn, t.error, t.selection, t.status_bar] {
            assert_eq!((s.fg, s.bg), (None, None));
        }
        assert!(t.selection.add_modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn unknown_name_is_not_found() {
        let err = Theme::load(Some("no-such-theme-xyz")).unwrap_err();
        assert!(matches!(err, ThemeError::NotFound(_)));
    }
}
