// The review panel's browser code (filled in by the panel work).
export {};
