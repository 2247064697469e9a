//! Output for people: terminal tables for devices and results.

pub mod table;
