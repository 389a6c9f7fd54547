################################################################################
# Alarms
################################################################################

variable "create" {
  description = "Whether to create the alarms."
  type        = bool
  default     = true
}

variable "name" {
  description = "Prefix of the alarm names."
  type        = string
}

variable "dead_letter_queue_names" {
  description = "DLQ names by role of their source queue; any message in one raises its alarm."
  type        = map(string)
}

variable "chunks_queue_name" {
  description = "Name of the chunks queue."
  type        = string
}

variable "oldest_chunk_age_threshold_s" {
  description = "Age in seconds of the oldest chunk message above which the chunks alarm fires (runners stuck or too few)."
  type        = number
  default     = 1800
}

variable "alarm_actions" {
  description = "ARNs notified when an alarm fires and when it clears (e.g. an SNS topic)."
  type        = list(string)
  default     = []
}

variable "tags" {
  description = "Tags for the alarms."
  type        = map(string)
  default     = {}
}
