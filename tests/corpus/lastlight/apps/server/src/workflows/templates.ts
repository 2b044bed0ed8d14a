export * from "lastlight-workflow-engine";
