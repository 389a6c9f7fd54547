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

variable "min_runners" {
  description = "Fewest runner tasks; 0 lets the service scale to zero."
  type        = number
  default     = 0
}

variable "max_runners" {
  description = "Most runner tasks (one GPU each)."
  type        = number
  default     = 8

  validation {
    condition     = var.max_runners >= 1 && floor(var.max_runners) == var.max_runners
    error_message = "max_runners must be a whole number, at least 1."
  }
}

variable "acceptable_latency_s" {
  description = "How long the chunks outstanding per task may take to clear, in seconds."
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

variable "tracking_metric" {
  description = "What target tracking holds at the target: visible_per_running (the first release), outstanding_per_running (visible + in flight per running task) or outstanding_per_desired (per desired task: tasks still starting count, so a cold start does not inflate it)."
  type        = string
  default     = "outstanding_per_desired"

  validation {
    condition     = contains(["visible_per_running", "outstanding_per_running", "outstanding_per_desired"], var.tracking_metric)
    error_message = "tracking_metric must be visible_per_running, outstanding_per_running or outstanding_per_desired."
  }
}

variable "from_zero" {
  description = "How the service leaves zero: exact_backlog (ExactCapacity ceil(visible / target), idempotent while tasks start) or change_plus_one (+1 per cooldown, the first release; a GPU cold start of minutes piles tasks up)."
  type        = string
  default     = "exact_backlog"

  validation {
    condition     = contains(["exact_backlog", "change_plus_one"], var.from_zero)
    error_message = "from_zero must be exact_backlog or change_plus_one."
  }
}

variable "from_zero_cooldown_s" {
  description = "Seconds between two evaluations of the step from zero that change the desired count."
  type        = number
  default     = 60
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

variable "from_zero_gate" {
  description = "What says no runner converts, to leave zero: nothing_in_flight (the chunks queue's in-flight count, published while the queue holds a message) or no_running_task (Container Insights' RunningTaskCount, which a service at zero may not publish)."
  type        = string
  default     = "nothing_in_flight"

  validation {
    condition     = contains(["nothing_in_flight", "no_running_task"], var.from_zero_gate)
    error_message = "from_zero_gate must be nothing_in_flight or no_running_task."
  }
}

variable "stall_minutes" {
  description = "Minutes chunks may wait with none in flight, the oldest that old, before every runner task is stopped (and leaving zero waits for a person); longer than a cold start. null: never."
  type        = number
  default     = 20

  validation {
    condition     = var.stall_minutes == null || try(var.stall_minutes >= 1 && floor(var.stall_minutes) == var.stall_minutes, false)
    error_message = "stall_minutes must be a whole number of minutes, at least 1, or null."
  }
}

variable "spread_lanes" {
  description = "Chunks a small document is spread over by the splitter (PAGEFLEET_FLEET_LANES: spread_tasks x workers_per_gpu); at most the backlog one task takes, so such a document starts one task from zero."
  type        = number
  default     = 1
}

variable "stall_alarm_actions" {
  description = "ARNs (an SNS topic) the stall alarm notifies besides stopping the runners."
  type        = list(string)
  default     = []
}

variable "tags" {
  description = "Tags for the alarms."
  type        = map(string)
  default     = {}
}
