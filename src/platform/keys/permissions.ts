/**
 * The permission a key needs to submit documents to a trigger. Every key is created with it;
 * permissions are stored per key so that more can come, and the edge refuses a key without it (403).
 */
export const TRIGGER_PERMISSION = "ApiKeyAuth.Trigger.Create";
