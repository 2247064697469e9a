//! Output for people: terminal tables for devices and results.

pub mod catalog;
pub mod compare;
pub mod rank;
pub mod table;
