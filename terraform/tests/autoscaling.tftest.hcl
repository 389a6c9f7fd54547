# The autoscaling module: leaving zero with an exact capacity from the backlog (never +1 per
# cooldown), target tracking on chunks outstanding per task, and the scale-in to zero. The
# numbers come from stack.json, i.e. pagefleet/scaling.py, the policy bench/fleet simulates.

mock_provider "aws" {
  override_during = plan
}

variables {
  name                 = "pf"
  cluster_name         = "pf"
  service_name         = "pf"
  chunks_queue_name    = "pf-chunks"
  min_runners          = jsondecode(file("stack.json")).scaling.min_runners
  max_runners          = jsondecode(file("stack.json")).scaling.max_runners
  acceptable_latency_s = jsondecode(file("stack.json")).scaling.acceptable_latency_s
  seconds_per_chunk    = jsondecode(file("stack.json")).scaling.seconds_per_chunk
  tracking_metric      = jsondecode(file("stack.json")).scaling.tracking_metric
  from_zero            = jsondecode(file("stack.json")).scaling.from_zero
  from_zero_cooldown_s = jsondecode(file("stack.json")).scaling.from_zero_cooldown_s
  scale_out_cooldown_s = jsondecode(file("stack.json")).scaling.scale_out_cooldown_s
  scale_in_cooldown_s  = jsondecode(file("stack.json")).scaling.scale_in_cooldown_s
  idle_minutes         = jsondecode(file("stack.json")).scaling.idle_minutes
  from_zero_gate       = jsondecode(file("stack.json")).scaling.from_zero_gate
  stall_minutes        = jsondecode(file("stack.json")).scaling.stall_minutes
  spread_lanes         = jsondecode(file("stack.json")).scaling.spread_tasks * 3
  stall_alarm_actions  = ["arn:aws:sns:us-east-1:123456789012:pf-alarms"]
}

run "default_policy" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  assert {
    condition     = aws_appautoscaling_target.this[0].min_capacity == 0 && aws_appautoscaling_target.this[0].max_capacity == jsondecode(file("stack.json")).scaling.max_runners
    error_message = "the service scales between zero and the policy's max_runners"
  }

  assert {
    condition     = aws_appautoscaling_target.this[0].resource_id == "service/pf/pf" && aws_appautoscaling_target.this[0].scalable_dimension == "ecs:service:DesiredCount"
    error_message = "the target is the runner service's desired count"
  }

  # --- leaving zero -----------------------------------------------------------------------

  assert {
    condition = (
      one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).adjustment_type == "ExactCapacity" &&
      one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).cooldown == 60
    )
    error_message = "leaving zero sets an exact capacity (repeating it while tasks start adds none), never ChangeInCapacity"
  }

  # The provider holds the steps as a set with string bounds: compare them keyed by adjustment.
  assert {
    condition = jsonencode({
      for s in one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).step_adjustment :
      tostring(s.scaling_adjustment) => [tonumber(s.metric_interval_lower_bound), try(tonumber(s.metric_interval_upper_bound), null)]
      }) == jsonencode({
      for s in jsondecode(file("stack.json")).scaling.from_zero_steps : tostring(s.adjustment) => [s.lower, s.upper]
    })
    error_message = "the steps from zero are pagefleet/scaling.py's from_zero_steps"
  }

  assert {
    # One visible chunk: breach = 1 - threshold 1 = 0, inside exactly one step, which sets 1.
    condition = [
      for s in one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).step_adjustment : s.scaling_adjustment
      if tonumber(s.metric_interval_lower_bound) <= 0 && (s.metric_interval_upper_bound == null ? true : 0 < tonumber(s.metric_interval_upper_bound))
    ] == [1]
    error_message = "a one-chunk document into an idle fleet starts exactly one task"
  }

  assert {
    condition = jsonencode({
      for s in one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).step_adjustment :
      tostring(s.scaling_adjustment) => [tonumber(s.metric_interval_lower_bound), try(tonumber(s.metric_interval_upper_bound), null)]
      }) == jsonencode({
      "1" = [0, 76], "2" = [76, 153], "3" = [153, 230], "4" = [230, 306], "5" = [306, 383], "6" = [383, 460], "7" = [460, 536], "8" = [536, null]
    })
    error_message = "ceil(visible / (1350 / 17.6)) tasks, the last step open-ended at max_runners (8)"
  }

  # Leaving zero reads only the chunks queue: SQS publishes its metrics while the queue holds a
  # message ("all metrics emit non-negative values only when the queue is active", Amazon SQS
  # Developer Guide, Available CloudWatch metrics for Amazon SQS), whereas a service at zero may
  # publish no RunningTaskCount for FILL to fill (issue 25, finding 3).
  assert {
    condition = (
      [for q in aws_cloudwatch_metric_alarm.from_zero[0].metric_query : q.expression if q.return_data] == [jsondecode(file("stack.json")).scaling.from_zero_expression] &&
      jsondecode(file("stack.json")).scaling.from_zero_expression == "IF(in_flight < 1 AND age < 1140, visible, 0)" &&
      jsonencode({ for q in aws_cloudwatch_metric_alarm.from_zero[0].metric_query : q.id => one(q.metric).metric_name if !q.return_data }) == jsonencode({
        age = "ApproximateAgeOfOldestMessage", in_flight = "ApproximateNumberOfMessagesNotVisible", visible = "ApproximateNumberOfMessagesVisible"
      }) &&
      aws_cloudwatch_metric_alarm.from_zero[0].threshold == 1 && aws_cloudwatch_metric_alarm.from_zero[0].comparison_operator == "GreaterThanOrEqualToThreshold" &&
      aws_cloudwatch_metric_alarm.from_zero[0].evaluation_periods == 1
    )
    error_message = "the step from zero sees the visible backlog while nothing is in flight and the backlog is younger than the stall limit, as pagefleet/scaling.py exports it, from the queue's metrics alone"
  }

  # --- stalled: chunks wait and nothing converts ------------------------------------------

  assert {
    condition = (
      [for q in aws_cloudwatch_metric_alarm.stalled[0].metric_query : q.expression if q.return_data] == [jsondecode(file("stack.json")).scaling.stall_expression] &&
      jsonencode(sort([for q in aws_cloudwatch_metric_alarm.stalled[0].metric_query : q.id if !q.return_data])) == jsonencode(["in_flight", "visible"]) &&
      aws_cloudwatch_metric_alarm.stalled[0].evaluation_periods == 20 && aws_cloudwatch_metric_alarm.stalled[0].datapoints_to_alarm == 20 &&
      one(aws_appautoscaling_policy.stalled[0].step_scaling_policy_configuration).adjustment_type == "ExactCapacity" &&
      one(one(aws_appautoscaling_policy.stalled[0].step_scaling_policy_configuration).step_adjustment).scaling_adjustment == 0 &&
      contains(aws_cloudwatch_metric_alarm.stalled[0].alarm_actions, "arn:aws:sns:us-east-1:123456789012:pf-alarms")
    )
    error_message = "20 minutes in a row of chunks waiting with none in flight stop every runner task and notify"
  }

  # --- target tracking ----------------------------------------------------------------------

  assert {
    condition     = abs(aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].target_value - 1350 / 17.6) < 1e-6
    error_message = "target backlog per task = acceptable latency / seconds per chunk (1350 s / 17.6 s: two cold starts and the four minutes target tracking takes to see a backlog)"
  }

  assert {
    condition = jsonencode({
      for m in aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].customized_metric_specification[0].metrics :
      m.id => [m.expression, m.return_data, try(one(one(m.metric_stat).metric).namespace, null), try(one(one(m.metric_stat).metric).metric_name, null),
      try({ for d in one(one(m.metric_stat).metric).dimensions : d.name => d.value }, null)]
      }) == jsonencode({
      visible          = [null, false, "AWS/SQS", "ApproximateNumberOfMessagesVisible", { QueueName = "pf-chunks" }]
      in_flight        = [null, false, "AWS/SQS", "ApproximateNumberOfMessagesNotVisible", { QueueName = "pf-chunks" }]
      desired          = [null, false, "ECS/ContainerInsights", "DesiredTaskCount", { ClusterName = "pf", ServiceName = "pf" }]
      backlog_per_task = ["IF(visible + in_flight < 1, 1, visible + in_flight) / desired", true, null, null, null]
    })
    error_message = "the tracked metric is chunks outstanding (visible + in flight, at least one, so tracking never sets zero) per desired task, tasks still starting included"
  }

  assert {
    condition = (
      aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].scale_out_cooldown == 180 &&
      aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].scale_in_cooldown == 300 &&
      !coalesce(aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].disable_scale_in, false)
    )
    error_message = "target tracking scales out and in, with the policy's cooldowns (out: 180 s, past the metrics' minute of delay, so a datapoint from before a scale-out adds nothing again)"
  }

  # --- to zero ------------------------------------------------------------------------------

  assert {
    condition = (
      one(aws_appautoscaling_policy.to_zero[0].step_scaling_policy_configuration).adjustment_type == "ExactCapacity" &&
      one(one(aws_appautoscaling_policy.to_zero[0].step_scaling_policy_configuration).step_adjustment).scaling_adjustment == 0 &&
      [for q in aws_cloudwatch_metric_alarm.idle[0].metric_query : q.expression if q.return_data] == ["visible + in_flight"] &&
      aws_cloudwatch_metric_alarm.idle[0].comparison_operator == "LessThanOrEqualToThreshold" && aws_cloudwatch_metric_alarm.idle[0].threshold == 0 &&
      aws_cloudwatch_metric_alarm.idle[0].evaluation_periods == 5 && aws_cloudwatch_metric_alarm.idle[0].datapoints_to_alarm == 5
    )
    error_message = "5 minutes with nothing visible or in flight sets zero tasks"
  }
}

# The first release's policy, kept selectable so the simulator's comparison can be deployed.
run "first_release_policy" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  variables {
    max_runners     = 4
    tracking_metric = "visible_per_running"
    from_zero       = "change_plus_one"
    from_zero_gate  = "no_running_task"
    stall_minutes   = null
  }

  assert {
    condition     = length(aws_cloudwatch_metric_alarm.stalled) == 0 && length(aws_appautoscaling_policy.stalled) == 0
    error_message = "without stall_minutes nothing stops a fleet that converts nothing"
  }

  assert {
    condition = (
      one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).adjustment_type == "ChangeInCapacity" &&
      jsonencode([for s in one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).step_adjustment : [tonumber(s.metric_interval_lower_bound), s.metric_interval_upper_bound, s.scaling_adjustment]]) == jsonencode([[0, null, 1]]) &&
      [for q in aws_cloudwatch_metric_alarm.from_zero[0].metric_query : q.expression if q.return_data] == ["IF(visible > 0 AND FILL(running, 0) == 0, 1, 0)"]
    )
    error_message = "change_plus_one adds a task per cooldown while chunks wait and none runs"
  }

  assert {
    condition = (
      jsonencode(sort([for m in aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].customized_metric_specification[0].metrics : m.id])) == jsonencode(["backlog_per_task", "running", "visible"]) &&
      [for m in aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].customized_metric_specification[0].metrics : m.expression if m.return_data] == ["visible / running"]
    )
    error_message = "visible_per_running tracks visible chunks per running task and queries nothing else"
  }
}

run "past_twenty_tasks_the_steps_stop_at_twenty" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  variables {
    max_runners = 24
  }

  assert {
    condition = (
      length(one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).step_adjustment) == 20 &&
      [for s in one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).step_adjustment : s.scaling_adjustment if s.metric_interval_upper_bound == null] == [20] &&
      aws_appautoscaling_target.this[0].max_capacity == 24
    )
    error_message = "a step policy holds 20 step adjustments (Application Auto Scaling's quota): leaving zero sets at most 20 tasks, and the target still scales to max_runners"
  }
}

# A small document becomes up to spread_lanes chunks; more than one task's target backlog
# would start two tasks from zero for it.
run "spread_lanes_past_one_tasks_backlog_refused" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  variables {
    spread_lanes = 77
  }

  expect_failures = [aws_appautoscaling_target.this]
}

run "outstanding_per_running" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  variables {
    tracking_metric = "outstanding_per_running"
  }

  assert {
    condition = (
      jsonencode(sort([for m in aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].customized_metric_specification[0].metrics : m.id])) == jsonencode(["backlog_per_task", "in_flight", "running", "visible"]) &&
      [for m in aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].customized_metric_specification[0].metrics : m.expression if m.return_data] == ["IF(visible + in_flight < 1, 1, visible + in_flight) / running"]
    )
    error_message = "outstanding_per_running tracks visible + in flight per running task"
  }
}

run "unknown_tracking_metric" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  variables {
    tracking_metric = "cpu"
  }

  expect_failures = [var.tracking_metric]
}

run "create_false" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  variables {
    create = false
  }

  assert {
    condition     = length(aws_appautoscaling_target.this) == 0 && length(aws_appautoscaling_policy.backlog) == 0 && length(aws_cloudwatch_metric_alarm.from_zero) == 0
    error_message = "create = false plans nothing"
  }
}
