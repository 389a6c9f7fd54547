resource "aws_cloudwatch_metric_alarm" "dead_letter" {
  for_each = var.create ? var.dead_letter_queue_names : {}

  alarm_name          = "${var.name}-${each.key}-dead-letters"
  alarm_description   = "A message reached ${each.value}: a ${each.key} message failed every delivery."
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateNumberOfMessagesVisible"
  dimensions          = { QueueName = each.value }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions

  tags = var.tags
}

resource "aws_cloudwatch_metric_alarm" "oldest_chunk" {
  count = var.create ? 1 : 0

  alarm_name          = "${var.name}-oldest-chunk-age"
  alarm_description   = "The oldest chunk has waited over ${var.oldest_chunk_age_threshold_s} s: runners are stuck, failing or too few."
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateAgeOfOldestMessage"
  dimensions          = { QueueName = var.chunks_queue_name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 5
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.oldest_chunk_age_threshold_s
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.alarm_actions

  tags = var.tags
}
