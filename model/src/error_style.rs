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

/// The whole contract of a refused call: `Ok` passes as it is; an error must have a styled
/// message ([`check_error_message`]) and hand back what it was given (`hands_back` says whether
/// it did, e.g. `|e| e.into_pod() == pod`).
pub fn check_refusal<T, E: std::fmt::Display>(
    result: Result<T, E>,
    hands_back: impl FnOnce(E) -> bool,
) -> Result<(), String> {
    let Err(e) = result else {
        return Ok(());
    };
    let message = e.to_string();
    check_error_message(&message)?;
    if hands_back(e) {
        Ok(())
    } else {
        Err(format!(
            "an error did not hand back what it was given: {message}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{check_error_message, check_refusal};

    /// Fails on data not handed back; passes a terse refusal and any success.
    #[test]
    fn the_refusal_contract_can_fail() {
        assert!(check_refusal(Err::<(), _>("pod p0 exists"), |_| false).is_err());
        assert!(check_refusal(Err::<(), _>("Pod p0 exists"), |_| true).is_err());
        assert!(check_refusal(Err::<(), _>("pod p0 exists"), |_| true).is_ok());
        assert!(check_refusal(Ok::<(), &str>(()), |_| false).is_ok());
    }

    /// Fails on an empty, a capitalized, a full-stopped and a multi-line message.
    #[test]
    fn the_error_style_can_fail() {
        for bad in ["", "Pod p0 exists", "pod p0 exists.", "pod p0\nexists"] {
            assert!(check_error_message(bad).is_err(), "{bad:?}");
        }
        assert!(check_error_message("pod p0 is already waiting").is_ok());
    }
}
