//! Private scratch directories: the in-process server's kubeconfig holds a private key and the
//! editable pod manifest is the user's, so only this user may enter them (0700).

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

/// A new directory `kexplore-PURPOSE-PID-UUID` under the temp dir, mode 0700, or why not.
pub fn private_dir(purpose: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!(
        "kexplore-{purpose}-{}-{}",
        std::process::id(),
        crate::apiserver::util::uuid()
    ));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_this_user_may_enter() {
        let d = super::private_dir("test").expect("dir");
        let mode = std::fs::metadata(&d).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(
            d.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("kexplore-test-")
        );
        std::fs::remove_dir(d).expect("remove");
    }
}
