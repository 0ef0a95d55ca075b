//! Patch draws from the sampling index (spec digest `shared/spec/medh5.md` §6.8).
