//! `e` in view 4: the pod manifest in the user's editor ($VISUAL, else $EDITOR, else vi), run
//! through `sh -c` so an editor with arguments (`code --wait`) works. The caller has already
//! given the terminal back; this only waits for the editor and reads the file again.

use std::path::Path;
use std::process::Command;

pub fn edit(path: &Path) -> Result<String, String> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|e| !e.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".into());
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()
        .map_err(|e| format!("cannot run the editor {editor:?}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "the editor {editor:?} exited with {status}; the manifest was not changed"
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}
