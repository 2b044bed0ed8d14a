//! The `steps/` rules: codes, default severities and docs (`src/families/steps/docs/`).

use crate::registry::declare_rules;

declare_rules! { "steps", "../families/steps/docs/";
    // Files and loading.
    JsonSyntax => Error;
    DuplicateKey => Warning;
    SR_LOAD_001 = "SR-LOAD-001" => Error;
    SR_LOAD_002 = "SR-LOAD-002" => Error;
    SR_LOAD_003 = "SR-LOAD-003" => Error;
    R_A1 = "R-A1" => Error;
    R_F1 = "R-F1" => Error;
    R_F2 = "R-F2" => Error;
    UnknownKey => Hint, fix = true;
    LegacyKey => Warning;
    FallbackKeyInvalid => Error, fix = true;
    SchemaViolation => Error;
    // Entry points.
    SR_ENTRY_001 = "SR-ENTRY-001" => Error, aliases = ["R-F11"];
    SR_ENTRY_002 = "SR-ENTRY-002" => Error, fix = true, aliases = ["R-A6"];
    SR_ENTRY_003 = "SR-ENTRY-003" => Error, fix = true, aliases = ["R-A4"];
    SR_GATE_002 = "SR-GATE-002" => Error, aliases = ["R-A3"];
    R_F3 = "R-F3" => Error;
    // Step structure.
    SR_VALID_004 = "SR-VALID-004" => Error, aliases = ["R-B1", "R-B10", "R-E3", "R-F4", "R-F7", "R-F8", "R-F9", "R-F10"];
    R_E1 = "R-E1" => Warning;
    R_B2 = "R-B2" => Error;
    R_B11 = "R-B11" => Error;
    SR_GATE_003 = "SR-GATE-003" => Error, aliases = ["R-B6"];
    R_F13 = "R-F13" => Error;
    R_F14 = "R-F14" => Error;
    R_F20 = "R-F20" => Error;
    R_A5 = "R-A5" => Warning;
    // agent.json.
    AC_VALID_001 = "AC-VALID-001" => Error;
    R_F5 = "R-F5" => Error;
    R_F6 = "R-F6" => Error;
    R_F12 = "R-F12" => Error;
    R_F15 = "R-F15" => Error;
    R_F16 = "R-F16" => Error;
    R_F17 = "R-F17" => Error;
    R_F18 = "R-F18" => Error;
    R_F19 = "R-F19" => Error;
    SR_GATE_004 = "SR-GATE-004" => Error;
    // Gate, intents and the send/receive contract.
    SR_VALID_001 = "SR-VALID-001" => Error, aliases = ["R-B3", "R-B9"];
    SR_VALID_002 = "SR-VALID-002" => Error, aliases = ["R-B7", "R-B8"];
    SR_VALID_003 = "SR-VALID-003" => Error, fix = true, aliases = ["R-D3"];
    R_B4 = "R-B4" => Error, fix = true, aliases = ["SR-TRANS-004", "SR-TRANS-007"];
    R_B12 = "R-B12" => Error;
    R_B14 = "R-B14" => Error;
    R_B15 = "R-B15" => Error;
    R_D1 = "R-D1" => Error;
    R_D2 = "R-D2" => Error;
    R_D4 = "R-D4" => Error;
    SchemaRef => Error;
    // Transitions.
    SR_TRANS_001 = "SR-TRANS-001" => Error, fix = true, aliases = ["R-B5", "R-C3", "R-C4", "SR-TRANS-006", "SR-TRANS-008", "SR-TRANS-010"];
    SR_TRANS_002 = "SR-TRANS-002" => Error;
    SR_TRANS_003 = "SR-TRANS-003" => Error;
    SR_TRANS_005 = "SR-TRANS-005" => Error;
    SR_TRANS_009 = "SR-TRANS-009" => Error;
    // Flow reachability (climpt's flow validator).
    FLOW_EntryCannotClose = "FLOW-EntryCannotClose" => Error;
    FLOW_NoClosureStep = "FLOW-NoClosureStep" => Error;
    FLOW_OrphanStep = "FLOW-OrphanStep" => Info, aliases = ["R-B13"];
    FLOW_UnknownIntentKey = "FLOW-UnknownIntentKey" => Warning;
    FLOW_IntentNotAllowedForKind = "FLOW-IntentNotAllowedForKind" => Error;
    FLOW_HandoffFromInitial = "FLOW-HandoffFromInitial" => Info;
    FLOW_KindBoundary = "FLOW-KindBoundary" => Info;
    FLOW_NextToSelf = "FLOW-NextToSelf" => Info;
    FLOW_NoPathToClosure = "FLOW-NoPathToClosure" => Error;
    // Validators and the completion loop.
    R_C1 = "R-C1" => Error;
    R_C2 = "R-C2" => Error;
    R_C5 = "R-C5" => Error;
    R_C6 = "R-C6" => Error;
    SuccessWhenInvalid => Error;
    UnknownExtractor => Error, fix = true;
    FailurePatternParams => Warning;
    ValidationStepUnknown => Warning;
    // Prompts and UV variables.
    PR_C3L_001 = "PR-C3L-001" => Info;
    PR_C3L_004 = "PR-C3L-004" => Error, aliases = ["PR-FILE-001"];
    PR_SYSTEM_002 = "PR-SYSTEM-002" => Error;
    PR_RESOLVE_003 = "PR-RESOLVE-003" => Error;
    PR_RESOLVE_004 = "PR-RESOLVE-004" => Error;
    PR_RESOLVE_005 = "PR-RESOLVE-005" => Error;
    UnusedUvVariable => Info;
    UnsubstitutedPlaceholder => Warning, fix = true;
    R_A2 = "R-A2" => Error;
    OptionalParamNoDefault => Warning;
    InitialContinuationMismatch => Info;
    PromptFrontmatterMismatch => Error;
    InputsFromUnresolved => Warning;
    C3lPatternMismatch => Error;
    BreakdownConfigMissing => Warning;
}
