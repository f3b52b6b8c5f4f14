//! The crate's error contract as checkers see it: a refused call's message is lowercase, terse
//! and one line (the `Display` of every error enum in `gangsched`). One copy, for the lockstep
//! drivers and the fuzz harnesses.

/// `Ok` if `message` keeps the error style: not empty, not capitalized, no full stop at the
/// end, one line. `Err` says what broke it.
pub fn check_error_message(message: &str) -> Result<(), String> {
    let styled = message.chars().next().is_some_and(|c| !c.is_uppercase())
        && !message.ends_with('.')
        && !message.contains('\n');
    if styled {
        Ok(())
    } else {
        Err(format!("an error's message breaks the style: {message:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::check_error_message;

    /// Fails on an empty, a capitalized, a full-stopped and a multi-line message.
    #[test]
    fn the_error_style_can_fail() {
        for bad in ["", "Pod p0 exists", "pod p0 exists.", "pod p0\nexists"] {
            assert!(check_error_message(bad).is_err(), "{bad:?}");
        }
        assert!(check_error_message("pod p0 is already waiting").is_ok());
    }
}
