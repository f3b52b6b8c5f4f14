//! Shared harness for gangway tests.
