//! Reference models for gangway.
