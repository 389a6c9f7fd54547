# pagefleet in a VPC that exists already: only its ID and the runners' subnets are given.

module "pagefleet" {
  source = "../../"

  name                = var.name
  region              = var.region
  vpc_id              = var.vpc_id
  subnet_ids          = var.subnet_ids
  runner_image_tag    = var.runner_image_tag
  lambda_package_path = var.lambda_package_path
}
