################################################################################
# Autoscaling of the runner service
################################################################################

variable "create" {
  description = "Whether to create the scaling target, policies and their alarms."
  type        = bool
  default     = true
}

variable "name" {
  description = "Prefix of the policy and alarm names."
  type        = string
}

variable "cluster_name" {
  description = "ECS cluster of the runner service."
  type        = string
}

variable "service_name" {
  description = "ECS runner service."
  type        = string
}

variable "chunks_queue_name" {
  description = "Name of the chunks queue whose backlog drives the scaling."
  type        = string
}

variable "max_runners" {
  description = "Most runner tasks (one GPU each)."
  type        = number
  default     = 4
}

variable "acceptable_latency_s" {
  description = "How long a chunk may wait in the queue, in seconds."
  type        = number
  default     = 300
}

variable "seconds_per_chunk" {
  description = "Average seconds one runner task (one GPU, all its workers) needs per chunk; measure it with scripts/bench."
  type        = number
  default     = 6

  validation {
    condition     = var.seconds_per_chunk > 0
    error_message = "seconds_per_chunk must be positive."
  }
}

variable "scale_out_cooldown_s" {
  description = "Seconds after a scale-out before another."
  type        = number
  default     = 60
}

variable "scale_in_cooldown_s" {
  description = "Seconds after a scale-in before another (long: a new GPU instance takes minutes)."
  type        = number
  default     = 300
}

variable "idle_minutes" {
  description = "Minutes with no chunk visible or in flight before the service scales to zero."
  type        = number
  default     = 15
}

variable "tags" {
  description = "Tags for the alarms."
  type        = map(string)
  default     = {}
}
