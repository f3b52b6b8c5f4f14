//! Output files, checked before a run: a run that takes minutes should not end in "cannot
//! write" for a typo in a path it was given at the start.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

/// Whether `path` can be written as a file, without changing what is there: an existing file
/// is opened for writing (not truncated); a new one is created and removed again.
///
/// # Errors
///
/// The I/O error opening or creating it gave (its directory does not exist, is not writable,
/// the path is a directory, …).
pub fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    match OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            OpenOptions::new().write(true).create_new(true).open(path)?;
            std::fs::remove_file(path)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::check_writable;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gangway-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir.join(name)
    }

    #[test]
    fn a_new_file_in_a_directory_that_exists_is_writable_and_not_left_behind() {
        let path = scratch("new.svg");
        check_writable(&path).expect("writable");
        assert!(!path.exists(), "the probe left {} behind", path.display());
    }

    #[test]
    fn an_existing_file_is_writable_and_keeps_its_contents() {
        let path = scratch("old.svg");
        std::fs::write(&path, "before").expect("written");
        check_writable(&path).expect("writable");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "before");
    }

    #[test]
    fn a_missing_directory_or_a_directory_is_not_writable() {
        let missing = scratch("no-such-dir").join("trace.svg");
        assert!(check_writable(&missing).is_err());
        assert!(!missing.exists());
        let dir = scratch("a-dir");
        std::fs::create_dir_all(&dir).expect("a directory");
        assert!(check_writable(&dir).is_err());
    }
}
