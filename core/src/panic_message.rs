//! The message of a panic caught in user code (a plugin, a binder, a sink), for the log line
//! and the status that report it.

/// A caught panic's message: its `&str` or `String` payload, else a placeholder.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
