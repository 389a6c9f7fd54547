locals {
  topic_arns = aws_sns_topic.this[*].arn
  # Notified when an alarm fires and when it clears.
  actions = concat(var.alarm_actions, local.topic_arns)

  ecs_rules = var.create && var.create_ecs_alarms ? {
    # A task that never reached RUNNING: image pull refused, dependency (the vLLM sidecar) never
    # healthy, no GPU capacity or vCPU quota for the capacity provider, ...
    task-failed-to-start = {
      description = "A ${var.name} runner task stopped before it ran (stopCode TaskFailedToStart); the event holds stoppedReason."
      pattern = {
        source        = ["aws.ecs"]
        "detail-type" = ["ECS Task State Change"]
        detail        = { clusterArn = [var.cluster_arn], lastStatus = ["STOPPED"], stopCode = ["TaskFailedToStart"] }
      }
    }
    # The service scheduler giving up on starting or placing tasks.
    service-start-impaired = {
      description = "The ${var.name} runner service cannot start or place tasks (SERVICE_TASK_START_IMPAIRED, SERVICE_TASK_PLACEMENT_FAILURE)."
      pattern = {
        source        = ["aws.ecs"]
        "detail-type" = ["ECS Service Action"]
        detail        = { clusterArn = [var.cluster_arn], eventName = ["SERVICE_TASK_START_IMPAIRED", "SERVICE_TASK_PLACEMENT_FAILURE"] }
      }
    }
  } : {}
}

################################################################################
# Topic (optional): where the alarms send, with e-mail subscriptions
################################################################################

resource "aws_sns_topic" "this" {
  count = var.create && var.create_topic ? 1 : 0

  name = "${var.name}-alarms"
  # The deployment's key; its policy lets CloudWatch use it (storage: allow_cloudwatch_alarms).
  kms_master_key_id = var.topic_kms_key_arn

  tags = var.tags
}

resource "aws_sns_topic_subscription" "email" {
  for_each = var.create && var.create_topic ? toset(var.email_addresses) : toset([])

  topic_arn = aws_sns_topic.this[0].arn
  protocol  = "email"
  endpoint  = each.value
}

################################################################################
# Dead letters: a message arriving in any DLQ
################################################################################

# A message redriven into a DLQ does not count in its NumberOfMessagesSent (only a SendMessage
# does), and the chunks DLQ's consumer (the dead-letter Lambda) takes it within seconds, so
# ApproximateNumberOfMessagesVisible alone rarely sees it there. The sum fires on each way a
# message shows: received by a consumer, waiting unconsumed, or sent by hand. (A `redrive` of the
# DLQ also receives its messages, and fires it too.)
resource "aws_cloudwatch_metric_alarm" "dead_letter" {
  for_each = var.create ? var.dead_letter_queue_names : {}

  alarm_name          = "${var.name}-${each.key}-dead-letters"
  alarm_description   = "A ${each.key} message reached ${each.value} after failing every delivery: received by its consumer, waiting there, or sent by hand."
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  evaluation_periods  = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions

  metric_query {
    id          = "arrived"
    expression  = "FILL(received, 0) + FILL(visible, 0) + FILL(sent, 0)"
    label       = "Messages arriving in ${each.value}"
    return_data = true
  }

  metric_query {
    id = "received"

    metric {
      namespace   = "AWS/SQS"
      metric_name = "NumberOfMessagesReceived"
      dimensions  = { QueueName = each.value }
      stat        = "Sum"
      period      = 60
    }
  }

  metric_query {
    id = "visible"

    metric {
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesVisible"
      dimensions  = { QueueName = each.value }
      stat        = "Maximum"
      period      = 60
    }
  }

  metric_query {
    id = "sent"

    metric {
      namespace   = "AWS/SQS"
      metric_name = "NumberOfMessagesSent"
      dimensions  = { QueueName = each.value }
      stat        = "Sum"
      period      = 60
    }
  }

  tags = var.tags
}

################################################################################
# Messages waiting: runners stuck or too few (chunks), a function's mapping off or failing
################################################################################

locals {
  # A message left waiting on the functions' queues is an upload not split or a job not
  # completed; left long enough (14 days), SQS drops it with no DLQ entry and no record.
  oldest_message = merge(
    {
      chunks = {
        alarm_name = "${var.name}-oldest-chunk-age"
        queue_name = var.chunks_queue_name
        threshold  = var.oldest_chunk_age_threshold_s
        why        = "runners are stuck, failing to start or too few"
      }
    },
    { for role, queue in var.handler_queue_names : role => {
      alarm_name = "${var.name}-${role}-oldest-message-age"
      queue_name = queue
      threshold  = var.oldest_message_age_threshold_s
      why        = "its function's event source mapping is off, throttled or failing"
    } },
  )
}

resource "aws_cloudwatch_metric_alarm" "oldest_message" {
  for_each = var.create ? local.oldest_message : {}

  alarm_name          = each.value.alarm_name
  alarm_description   = "The oldest ${each.key} message has waited over ${each.value.threshold} s: ${each.value.why}."
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateAgeOfOldestMessage"
  dimensions          = { QueueName = each.value.queue_name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 5
  comparison_operator = "GreaterThanThreshold"
  threshold           = each.value.threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions

  tags = var.tags
}

moved {
  from = aws_cloudwatch_metric_alarm.oldest_chunk[0]
  to   = aws_cloudwatch_metric_alarm.oldest_message["chunks"]
}

################################################################################
# Functions: errors and throttles
################################################################################

# With partial batch responses a failed record is not a function error: Errors counts
# invocations that raised or timed out (a handler bug, a missing permission). Throttles should
# stay at zero, since each event source's maximum concurrency is its reserved concurrency.
resource "aws_cloudwatch_metric_alarm" "lambda_errors" {
  for_each = var.create ? var.function_names : {}

  alarm_name          = "${var.name}-${replace(each.key, "_", "-")}-errors"
  alarm_description   = "The ${each.key} function (${each.value}) failed invocations: see its log group."
  namespace           = "AWS/Lambda"
  metric_name         = "Errors"
  dimensions          = { FunctionName = each.value }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions

  tags = var.tags
}

resource "aws_cloudwatch_metric_alarm" "lambda_throttles" {
  for_each = var.create ? var.function_names : {}

  alarm_name          = "${var.name}-${replace(each.key, "_", "-")}-throttles"
  alarm_description   = "The ${each.key} function (${each.value}) was throttled: its reserved concurrency or the account's Lambda concurrency is exhausted."
  namespace           = "AWS/Lambda"
  metric_name         = "Throttles"
  dimensions          = { FunctionName = each.value }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions

  tags = var.tags
}

################################################################################
# Runner tasks that fail to start: ECS events -> a log group (with stoppedReason) and an alarm
################################################################################

resource "aws_cloudwatch_event_rule" "ecs" {
  for_each = local.ecs_rules

  name          = "${var.name}-${each.key}"
  description   = each.value.description
  event_pattern = jsonencode(each.value.pattern)

  tags = var.tags
}

resource "aws_cloudwatch_log_group" "ecs_events" {
  count = var.create && var.create_ecs_alarms ? 1 : 0

  # checkov:skip=CKV_AWS_338:Operational events only; a year of them costs more than it tells.
  name              = "/aws/events/${var.name}/ecs"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.log_kms_key_arn

  tags = var.tags
}

# EventBridge writes to the log group under this resource policy (the one the console creates
# for a CloudWatch Logs target), limited to the one group.
data "aws_iam_policy_document" "ecs_events" {
  count = var.create && var.create_ecs_alarms ? 1 : 0

  statement {
    sid       = "EventBridgeWritesEcsEvents"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.ecs_events[0].arn}:*"]

    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com", "delivery.logs.amazonaws.com"]
    }
  }
}

resource "aws_cloudwatch_log_resource_policy" "ecs_events" {
  count = var.create && var.create_ecs_alarms ? 1 : 0

  policy_name     = "${var.name}-ecs-events"
  policy_document = data.aws_iam_policy_document.ecs_events[0].json
}

# The target keeps each event (with stoppedReason, kept longer than ECS shows stopped tasks) and
# makes the rule's Invocations metric, which the alarm watches.
resource "aws_cloudwatch_event_target" "ecs" {
  for_each = local.ecs_rules

  rule      = aws_cloudwatch_event_rule.ecs[each.key].name
  target_id = "log-group"
  arn       = aws_cloudwatch_log_group.ecs_events[0].arn

  depends_on = [aws_cloudwatch_log_resource_policy.ecs_events]
}

resource "aws_cloudwatch_metric_alarm" "task_start_failures" {
  count = var.create && var.create_ecs_alarms ? 1 : 0

  alarm_name          = "${var.name}-runner-tasks-failing-to-start"
  alarm_description   = "Runner tasks fail to start or cannot be placed; the events, with stoppedReason, are in ${aws_cloudwatch_log_group.ecs_events[0].name}."
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  evaluation_periods  = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions

  metric_query {
    id          = "failures"
    expression  = join(" + ", [for k in sort(keys(local.ecs_rules)) : "FILL(${replace(k, "-", "_")}, 0)"])
    label       = "Runner task start failures"
    return_data = true
  }

  dynamic "metric_query" {
    for_each = local.ecs_rules

    content {
      id = replace(metric_query.key, "-", "_")

      metric {
        namespace   = "AWS/Events"
        metric_name = "Invocations"
        dimensions  = { RuleName = aws_cloudwatch_event_rule.ecs[metric_query.key].name }
        stat        = "Sum"
        period      = 300
      }
    }
  }

  tags = var.tags
}
